// Answers the open tool calls of the last model response. Each call is, in call order:
// answered at once (unknown tool, bad arguments, refused by policy, denied by a person, a
// client result from the resume batch), executed (server tool, allowed or approved), or left
// pending (needs an approval, or a client / the user must answer). Every answer is a
// tool_result item plus a tool message; the pending ones of one response form one wait.
import type { RequestToolCall } from '../../runtime/providers/model-adapters/index.js';
import type { DoneMessage, PendingCall } from './attempt-protocol.js';
import type { AgentState, Pending } from './agent-state.js';
import { parseCallArguments, toolMessage, type ToolOutcome } from './conversation.js';
import type { ItemWriter } from './item-writer.js';
import { ToolError, type CatalogEntry, type ToolCatalog } from './tools/index.js';

export interface SettleContext {
  state: AgentState;
  catalog: ToolCatalog;
  items: ItemWriter;
  signal: AbortSignal;
  now: () => Date;
}

type Decision =
  /** `counts`: whether the answer is a tool error for retries.tools (a refusal by policy or person is not). */
  | { type: 'answer'; outcome: ToolOutcome; counts: boolean }
  | { type: 'execute'; entry: CatalogEntry; args: Record<string, unknown> }
  | { type: 'approval'; entry: CatalogEntry; args: Record<string, unknown> }
  | { type: 'call'; entry: CatalogEntry; args: Record<string, unknown> };

/** Answers what it can; returns what is left pending (null when every call is answered). */
export async function settleToolCalls(ctx: SettleContext, calls: readonly RequestToolCall[]): Promise<Pending | null> {
  const pending: Pending = { approvals: [], calls: [] };
  for (const call of calls) {
    if (ctx.signal.aborted) return null; // the loop sees the abort and answers cancelled
    const decision = decide(ctx.state, ctx.catalog, call);
    switch (decision.type) {
      case 'answer':
        answer(ctx, call, decision.outcome, decision.counts);
        break;
      case 'execute':
        answer(ctx, call, await execute(ctx, decision.entry, decision.args), true);
        break;
      case 'approval':
        pending.approvals.push(pendingCall(call, decision.entry, decision.args));
        break;
      case 'call':
        pending.calls.push(pendingCall(call, decision.entry, decision.args));
        break;
      default: {
        const unreachable: never = decision;
        throw new Error(`unknown decision ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return pending.approvals.length + pending.calls.length > 0 ? pending : null;
}

export function waitReason(pending: Pending): NonNullable<DoneMessage['wait_reason']> {
  // Approvals first: nothing else can happen before a person decides.
  if (pending.approvals.length > 0) return 'approval';
  return pending.calls.some((c) => c.presentation.kind === 'user_question') ? 'user_question' : 'client_tool';
}

function decide(state: AgentState, catalog: ToolCatalog, call: RequestToolCall): Decision {
  const entry = catalog.get(call.name);
  if (!entry) return { type: 'answer', outcome: { error: `unknown tool "${call.name}"` }, counts: true };
  const returned = state.returned[call.id];
  if (returned) {
    const outcome = returned.status === 'returned' ? { output: returned.value } : { error: describeFailure(returned.status, returned.value) };
    return { type: 'answer', outcome, counts: true };
  }
  const args = parseCallArguments(call.arguments);
  if (!args) return { type: 'answer', outcome: { error: 'the arguments are not a JSON object' }, counts: true };
  const problem = entry.check?.(args);
  if (problem !== undefined) return { type: 'answer', outcome: { error: `invalid arguments: ${problem}` }, counts: true };
  if (entry.permission === 'deny') return { type: 'answer', outcome: { error: 'this tool is not permitted' }, counts: false };
  const approval = state.approvals[call.id];
  if (approval === 'deny') return { type: 'answer', outcome: { error: 'the call was denied by the user' }, counts: false };
  if (entry.permission === 'ask' && approval !== 'approve') return { type: 'approval', entry, args };
  return entry.kind === 'server' ? { type: 'execute', entry, args } : { type: 'call', entry, args };
}

async function execute(ctx: SettleContext, entry: CatalogEntry, args: Record<string, unknown>): Promise<ToolOutcome> {
  if (!entry.execute) return { error: `tool "${entry.name}" cannot run here` };
  try {
    return { output: (await entry.execute(args, { signal: ctx.signal, now: ctx.now })) ?? null };
  } catch (err) {
    // A ToolError is meant for the model; anything else is a tool bug, reported without internals.
    return { error: err instanceof ToolError ? err.message : `tool "${entry.name}" failed` };
  }
}

function answer(ctx: SettleContext, call: RequestToolCall, outcome: ToolOutcome, counts: boolean): void {
  const toolName = ctx.catalog.get(call.name)?.name ?? call.name;
  ctx.items.emit('tool_result', { tool_call_id: call.id, tool_name: toolName, ...outcome });
  ctx.state.messages.push(toolMessage(call, outcome));
  delete ctx.state.returned[call.id];
  // Consecutive errors bound the loop (retries.tools); a success resets the count, and a
  // refusal neither counts nor resets (it says nothing about whether tools work).
  if ('error' in outcome) ctx.state.tool_errors += counts ? 1 : 0;
  else ctx.state.tool_errors = 0;
}

function pendingCall(call: RequestToolCall, entry: CatalogEntry, args: Record<string, unknown>): PendingCall {
  const presentation: Record<string, unknown> = { ...entry.presentation, kind: entry.kind };
  if (entry.kind === 'user_question') Object.assign(presentation, { question: args.question, ...(args.choices ? { choices: args.choices } : {}) });
  return { tool_call_id: call.id, tool_name: entry.name, arguments: args, presentation };
}

function describeFailure(status: string, value: unknown): string {
  if (typeof value === 'string' && value !== '') return value;
  return value === null || value === undefined ? `the call ${status}` : `the call ${status}: ${JSON.stringify(value)}`;
}
