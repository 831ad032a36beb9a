import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkEndpoint, normaliseHttpOrigin, type EndpointCheck } from '../../../runtime/providers/index.js';

const test = suite('runtime/providers/endpoint-policy');

const none = { allowedHttpOrigins: [] };
const ollama = { allowedHttpOrigins: ['http://127.0.0.1:11434', 'HTTP://Gateway.Internal'] };

function refusal(check: EndpointCheck): string | undefined {
  return check.ok ? undefined : check.code;
}

test('allows any https endpoint and returns the parsed URL', () => {
  const check = checkEndpoint('https://api.openai.com/v1', none);
  assert.ok(check.ok);
  if (check.ok) {
    assert.instance(check.url, URL);
    assert.is(check.url.href, 'https://api.openai.com/v1');
  }
  assert.ok(checkEndpoint('https://example.com:8443/path?x=1', none).ok);
});

test('refuses plain http unless its exact origin is allowed', () => {
  assert.is(refusal(checkEndpoint('http://api.example.com/v1', none)), 'http_not_allowed');
  assert.ok(checkEndpoint('http://127.0.0.1:11434', ollama).ok);
  assert.ok(checkEndpoint('http://127.0.0.1:11434/v1/models', ollama).ok, 'any path under the origin');
  assert.is(refusal(checkEndpoint('http://127.0.0.1:11435', ollama)), 'http_not_allowed', 'other port');
  assert.is(refusal(checkEndpoint('http://localhost:11434', ollama)), 'http_not_allowed', 'other host name');
  assert.is(refusal(checkEndpoint('https://127.0.0.1:11434', ollama)), undefined, 'https needs no allowance');
});

test('compares origins normalised: host case and default port do not matter', () => {
  assert.ok(checkEndpoint('http://gateway.internal/v1', ollama).ok);
  assert.ok(checkEndpoint('http://GATEWAY.internal:80/v1', ollama).ok);
  assert.is(refusal(checkEndpoint('http://gateway.internal:8080/v1', ollama)), 'http_not_allowed');
  assert.is(normaliseHttpOrigin('HTTP://Gateway.Internal:80/'), 'http://gateway.internal');
  assert.is(normaliseHttpOrigin('http://host/path'), undefined, 'an allow-list entry is a bare origin');
  assert.is(normaliseHttpOrigin('https://host'), undefined, 'only http entries mean anything');
});

test('refuses userinfo, including an empty one', () => {
  assert.is(refusal(checkEndpoint('https://user:pass@api.example.com', none)), 'userinfo');
  assert.is(refusal(checkEndpoint('https://user@api.example.com', none)), 'userinfo');
  assert.is(refusal(checkEndpoint('https://@api.example.com', none)), 'userinfo');
  assert.is(refusal(checkEndpoint('http://u:p@127.0.0.1:11434', ollama)), 'userinfo');
  assert.ok(checkEndpoint('https://api.example.com/a@b', none).ok, 'an @ in the path is not userinfo');
});

test('refuses other schemes, fragments and malformed URLs', () => {
  assert.is(refusal(checkEndpoint('ftp://files.example.com', none)), 'scheme');
  assert.is(refusal(checkEndpoint('javascript:alert(1)', none)), 'scheme');
  assert.is(refusal(checkEndpoint('file:///etc/passwd', none)), 'scheme');
  assert.is(refusal(checkEndpoint('ws://example.com', none)), 'scheme');
  assert.is(refusal(checkEndpoint('https://example.com/v1#frag', none)), 'fragment');
  assert.is(refusal(checkEndpoint('https://example.com/v1#', none)), 'fragment');
  for (const bad of ['', 'not a url', '/relative/path', 'https://', ' https://example.com', 'https://exa mple.com', 'https:\\\\example.com']) {
    assert.is(refusal(checkEndpoint(bad, none)), 'malformed', JSON.stringify(bad));
  }
  assert.is(refusal(checkEndpoint(`https://example.com/${'a'.repeat(3000)}`, none)), 'malformed');
});

test('does not block private, loopback or link-local addresses', () => {
  for (const url of ['https://10.0.0.5', 'https://192.168.1.10:8443/v1', 'https://127.0.0.1', 'https://[::1]:8443', 'https://169.254.169.254']) {
    assert.ok(checkEndpoint(url, none).ok, url);
  }
  assert.ok(checkEndpoint('http://[::1]:11434', { allowedHttpOrigins: ['http://[::1]:11434'] }).ok);
});

test('explains a refusal in its reason', () => {
  const check = checkEndpoint('http://api.example.com', none);
  assert.not.ok(check.ok);
  if (!check.ok) assert.match(check.reason, /http:\/\/api\.example\.com/);
});

test.run();
