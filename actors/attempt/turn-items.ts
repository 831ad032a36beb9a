// Turns one model response's events into run items: one text_message item for the text, one
// reasoning item for the reasoning, one tool_call item per call. Items start on their first
// event; text and reasoning complete when the response finishes, a call on its end event.
// When a response breaks off (error, cancel) the open items are completed as `interrupted`,
// so every allocated ordinal still ends in a completed item and ordinals stay gap-free.
import type { RequestToolCall, ToolCallDelta, ToolCallEnd, ToolCallStart } from '../../runtime/providers/model-adapters/index.js';
import type { ItemWriter, OpenItem } from './item-writer.js';

interface OpenText {
  item: OpenItem;
  text: string;
}

interface OpenCall {
  item: OpenItem;
  id: string;
  name: string;
  args: string;
}

export interface TurnOutput {
  text: string;
  reasoning: string;
  /** In the order the model made them. */
  calls: RequestToolCall[];
}

export class TurnItems {
  private textItem: OpenText | undefined;
  private reasoningItem: OpenText | undefined;
  private text = '';
  private reasoningText = '';
  private readonly open = new Map<number, OpenCall>();
  private readonly ended: Array<{ index: number; call: RequestToolCall }> = [];

  constructor(private readonly items: ItemWriter) {}

  addText(delta: string): void {
    this.textItem ??= { item: this.items.start('text_message', { text: '' }), text: '' };
    this.textItem.text += delta;
    this.text += delta;
    this.items.delta(this.textItem.item, { text: delta });
  }

  addReasoning(delta: string): void {
    this.reasoningItem ??= { item: this.items.start('reasoning', { text: '' }), text: '' };
    this.reasoningItem.text += delta;
    this.reasoningText += delta;
    this.items.delta(this.reasoningItem.item, { text: delta });
  }

  callStart(event: ToolCallStart): void {
    const item = this.items.start('tool_call', { tool_call_id: event.id, tool_name: event.name, arguments: '' });
    this.open.set(event.index, { item, id: event.id, name: event.name, args: '' });
  }

  callDelta(event: ToolCallDelta): void {
    const call = this.open.get(event.index);
    if (!call) return; // the stream contract starts every call first; a stray fragment has no item to join
    call.args += event.arguments_delta;
    this.items.delta(call.item, { arguments: event.arguments_delta });
  }

  callEnd(event: ToolCallEnd): void {
    if (!this.open.has(event.index)) this.callStart({ type: 'tool_call_start', index: event.index, id: event.id, name: event.name });
    const call = this.open.get(event.index)!;
    this.open.delete(event.index);
    this.items.complete(call.item, { tool_call_id: event.id, tool_name: event.name, arguments: event.arguments });
    this.ended.push({ index: event.index, call: { id: event.id, name: event.name, arguments: event.arguments } });
  }

  /** The response finished: completes what is open and returns what the model said. */
  finish(): TurnOutput {
    for (const [index, call] of [...this.open]) {
      this.callEnd({ type: 'tool_call_end', index, id: call.id, name: call.name, arguments: call.args === '' ? '{}' : call.args });
    }
    this.closeText({});
    return {
      text: this.text,
      reasoning: this.reasoningText,
      calls: [...this.ended].sort((a, b) => a.index - b.index).map((e) => e.call),
    };
  }

  /** The response broke off: completes every open item as interrupted; nothing of it is used. */
  interrupt(): void {
    for (const call of this.open.values()) {
      this.items.complete(call.item, { tool_call_id: call.id, tool_name: call.name, arguments: call.args, interrupted: true });
    }
    this.open.clear();
    this.closeText({ interrupted: true });
  }

  private closeText(extra: Record<string, unknown>): void {
    if (this.reasoningItem) this.items.complete(this.reasoningItem.item, { text: this.reasoningItem.text, ...extra });
    if (this.textItem) this.items.complete(this.textItem.item, { text: this.textItem.text, ...extra });
    this.reasoningItem = undefined;
    this.textItem = undefined;
  }
}
