// The reviewer's place in tool settlement: which calls it judges, and the `review` item that
// records each verdict (committed with the step's other items, so a UI shows why a call was
// denied or put before a person).
//
// Reviewed: every call that would otherwise run or leave the attempt: server tools about to
// execute, client tool calls about to be handed to the client, and calls waiting for an
// approval anyway (the verdict can deny them outright, and shows the approver the risk).
// Not reviewed: calls already answered (unknown tool, bad arguments, denied by policy, a
// client result), `ask_user` (it only asks the user a question), and calls a person has
// already decided in a resume batch (re-reviewing an approved call could loop for ever).
import type { RequestToolCall } from '../../runtime/providers/model-adapters/index.js';
import type { AgentState } from './agent-state.js';
import type { ItemWriter } from './item-writer.js';
import { reviewToolCall, type ReviewerSetup } from './reviewer.js';
import { decideReview, thresholdFor, type ReviewedTool, type ReviewRecord } from './reviewer-verdict.js';
import type { CatalogEntry } from './tools/index.js';

export interface ReviewGateContext {
  reviewer: ReviewerSetup | null;
  state: AgentState;
  items: ItemWriter;
  signal: AbortSignal;
}

export function needsReview(ctx: ReviewGateContext, call: RequestToolCall, entry: CatalogEntry): boolean {
  return ctx.reviewer !== null && entry.kind !== 'user_question' && ctx.state.approvals[call.id] === undefined;
}

/**
 * Judges one call and records the verdict as a `review` item. Undefined when the run was
 * cancelled meanwhile: nothing is recorded and the loop answers cancelled.
 */
export async function reviewCall(ctx: ReviewGateContext, call: RequestToolCall, entry: CatalogEntry, args: Record<string, unknown>): Promise<ReviewRecord | undefined> {
  const reviewer = ctx.reviewer!;
  const tool = reviewedTool(entry);
  const result = await reviewToolCall(reviewer, { tool, description: entry.description, arguments: args }, { signal: ctx.signal, usage: ctx.state.usage, messages: ctx.state.messages });
  if (ctx.signal.aborted) return undefined;
  const record: ReviewRecord = {
    tool_call_id: call.id,
    tool_name: entry.name,
    risk: result.ok ? result.verdict.risk : null,
    reason: result.ok ? result.verdict.reason : '',
    decision: decideReview(reviewer.config, tool, result),
    risk_threshold: thresholdFor(reviewer.config, tool),
    ...(result.ok ? {} : { error: result.error }),
  };
  ctx.items.emit('review', { ...record });
  return record;
}

function reviewedTool(entry: CatalogEntry): ReviewedTool {
  const toolset = entry.presentation.toolset;
  return { name: entry.name, toolset: typeof toolset === 'string' ? toolset : undefined };
}
