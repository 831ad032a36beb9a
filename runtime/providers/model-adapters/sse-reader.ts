// Incremental Server-Sent Events parser (WHATWG "event stream interpretation") over a byte
// stream. Chunk boundaries may fall anywhere: inside a UTF-8 sequence, a line, or between
// the CR and LF of a CRLF; the parser keeps the partial state across chunks.
export interface SseMessage {
  /** The `event:` field, or 'message' when absent (as EventSource does). */
  event: string;
  data: string;
  id?: string;
}

export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  // A chunk ending in CR may be the first half of CRLF; the LF that follows is then skipped.
  let skipLeadingLf = false;
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let hasData = false;

  const dispatch = (): SseMessage | undefined => {
    // Per the spec, a block without any data line dispatches nothing.
    const message = hasData ? { event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) } : undefined;
    event = '';
    data = [];
    hasData = false;
    return message;
  };

  const processLine = (line: string): SseMessage | undefined => {
    if (line === '') return dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      data.push(value);
      hasData = true;
    } else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    return undefined;
  };

  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (skipLeadingLf && buffer.startsWith('\n')) buffer = buffer.slice(1);
    skipLeadingLf = false;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const ch = buffer.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      const message = processLine(buffer.slice(start, i));
      if (message) yield message;
      if (ch === 13) {
        if (i + 1 === buffer.length) skipLeadingLf = true;
        else if (buffer.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    buffer = buffer.slice(start);
  }
  // An unterminated final block is discarded, as the spec says: it may be a truncated event.
}
