// Thrown by decoders when the bytes do not follow the vendor's wire format (bad JSON, bad
// frame CRC). http-stream.ts turns it into a non-retryable `protocol_error` event: a
// malformed stream is a vendor or proxy bug that repeating will not fix.
export class ModelProtocolError extends Error {
  override readonly name = 'ModelProtocolError';
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelProtocolError(`${what} is not valid JSON`);
  }
}
