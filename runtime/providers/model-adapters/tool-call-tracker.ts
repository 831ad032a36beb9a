// Assembles tool calls from vendor fragments and numbers them 0, 1, 2… in order of
// appearance. Vendors key fragments differently (OpenAI by tool index, Anthropic and Bedrock
// by content block, Responses by output item); the key is whatever the vendor uses.
import type { ToolCallDelta, ToolCallEnd, ToolCallStart } from './model-events.js';

interface OpenCall {
  index: number;
  id: string;
  name: string;
  args: string;
}

export class ToolCallTracker {
  private readonly open = new Map<string | number, OpenCall>();
  private next = 0;

  /** How many calls were started in this response (decides finish reason `tool_calls`). */
  get count(): number {
    return this.next;
  }

  has(key: string | number): boolean {
    return this.open.has(key);
  }

  start(key: string | number, id: string, name: string): ToolCallStart {
    const call = { index: this.next++, id, name, args: '' };
    this.open.set(key, call);
    return { type: 'tool_call_start', index: call.index, id, name };
  }

  /** Undefined when the key has no open call or the fragment is empty. */
  delta(key: string | number, fragment: string): ToolCallDelta | undefined {
    const call = this.open.get(key);
    if (!call || fragment === '') return undefined;
    call.args += fragment;
    return { type: 'tool_call_delta', index: call.index, arguments_delta: fragment };
  }

  /** `finalArgs` is the vendor's own complete text when it sends one; it wins over the fragments. */
  end(key: string | number, finalArgs?: string): ToolCallEnd | undefined {
    const call = this.open.get(key);
    if (!call) return undefined;
    this.open.delete(key);
    const args = finalArgs ?? call.args;
    return { type: 'tool_call_end', index: call.index, id: call.id, name: call.name, arguments: args === '' ? '{}' : args };
  }

  /** Ends every open call in start order (for protocols without an explicit end marker). */
  endAll(): ToolCallEnd[] {
    const keys = [...this.open.entries()].sort((a, b) => a[1].index - b[1].index).map(([k]) => k);
    return keys.map((k) => this.end(k)).filter((e): e is ToolCallEnd => e !== undefined);
  }
}
