import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { signSigV4, uriEncode } from '../../../../runtime/providers/model-adapters/aws-sigv4.js';

const test = suite('runtime/providers/model-adapters/aws-sigv4');

// Known answers from AWS's published examples.
test('matches the SigV4 test suite "get-vanilla" signature', () => {
  const headers = signSigV4({
    method: 'GET',
    url: 'https://example.amazonaws.com/',
    headers: {},
    body: '',
    region: 'us-east-1',
    service: 'service',
    credentials: { access_key_id: 'AKIDEXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    now: new Date('2015-08-30T12:36:00Z'),
  });
  assert.is(headers['x-amz-date'], '20150830T123600Z');
  assert.is(
    headers.authorization,
    'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  );
});

test('matches the documented S3 GET Object example signature (extra signed headers)', () => {
  const headers = signSigV4({
    method: 'GET',
    url: 'https://examplebucket.s3.amazonaws.com/test.txt',
    headers: { Range: 'bytes=0-9', 'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    body: '',
    region: 'us-east-1',
    service: 's3',
    credentials: { access_key_id: 'AKIAIOSFODNN7EXAMPLE', secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
    now: new Date('2013-05-24T00:00:00Z'),
  });
  assert.match(headers.authorization ?? '', 'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ');
  assert.match(headers.authorization ?? '', 'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41');
});

test('adds and signs the session token when one is given', () => {
  const headers = signSigV4({
    method: 'POST',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m%3A0/converse-stream',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    region: 'us-east-1',
    service: 'bedrock',
    credentials: { access_key_id: 'AKID', secret_access_key: 'secret', session_token: 'TOKEN' },
    now: new Date('2024-01-01T00:00:00Z'),
  });
  assert.is(headers['x-amz-security-token'], 'TOKEN');
  assert.match(headers.authorization ?? '', 'SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, ');
});

test('uriEncode follows RFC 3986 (encodes !\'()* and keeps -._~)', () => {
  assert.is(uriEncode("a!b'c(d)e*f-g.h_i~j:k/l"), 'a%21b%27c%28d%29e%2Af-g.h_i~j%3Ak%2Fl');
});

test.run();
