import { createInterface } from 'node:readline';

/** The first line of standard input (for --password-stdin); the trailing newline is dropped. */
export async function readFirstLine(input: NodeJS.ReadableStream = process.stdin): Promise<string | null> {
  const lines = createInterface({ input, crlfDelay: Infinity, terminal: false });
  try {
    for await (const line of lines) return line;
    return null;
  } finally {
    lines.close();
  }
}

/** Prompts on the terminal without echoing what is typed. */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  const stderr = process.stderr;
  return new Promise((resolve, reject) => {
    stderr.write(question);
    let value = '';
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error): void => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return done();
        if (char === '\u0003') return done(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.on('data', onData);
  });
}
