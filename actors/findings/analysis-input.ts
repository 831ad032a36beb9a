import type { RunItem, RunRow, Services, StreamBus } from '../../runtime/index.js';
import { readItems } from '../runs/index.js';

// The input text of an analysis run: the selected traces, newest first. Bounded so that a
// long run cannot crowd out the others or exceed the input limit: each item's content, each
// trace and the whole text have a budget, and long content is cut with a visible marker.
const ITEM_CHARS = 2_000;
const FIELD_CHARS = 4_000;
const TRACE_CHARS = 12_000;
const TOTAL_CHARS = 400_000;
const ITEMS_PER_TRACE = 100;

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max)}… [truncated ${text.length - max} characters]`);
const json = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? '');

function inputText(run: RunRow): string {
  const content = (run.input as { content?: Array<{ text?: unknown }> }).content;
  return Array.isArray(content) ? content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n') : json(run.input);
}

function traceText(run: RunRow, items: RunItem[]): string {
  const lines = [
    `### Trace run_id=${run.id} trace_id=${run.id}`,
    `status: ${run.status}${run.wait_reason ? ` (${run.wait_reason})` : ''}; created_at: ${run.created_at}; agent_revision_id: ${run.agent_revision_id}`,
    `input: ${cut(inputText(run), FIELD_CHARS)}`,
    `output: ${cut(json(run.output), FIELD_CHARS)}`,
    ...(run.failure ? [`failure: ${run.failure.code}: ${cut(run.failure.message, FIELD_CHARS)}`] : []),
    ...(items.length > 0 ? ['items:', ...items.map((i) => `[${i.ordinal}] ${i.kind}: ${cut(json(i.content), ITEM_CHARS)}`)] : []),
  ];
  return cut(lines.join('\n'), TRACE_CHARS);
}

export interface AnalysisInput {
  text: string;
  /** The traces whose content is in the text (all selected ones unless the budget ran out). */
  readTraceIds: string[];
}

/** Builds the analysis input; `withItems` (preset 'execution') adds each run's items. */
export async function buildAnalysisInput(services: Services, bus: StreamBus, agent: { id: string; name: string }, runs: RunRow[], withItems: boolean): Promise<AnalysisInput> {
  const header = [
    `Review these ${runs.length} trace(s) of the agent "${agent.name}" (agent_id ${agent.id}), newest first.`,
    'Cite evidence only with the run_id and trace_id values of the trace headers below.',
  ].join('\n');
  const parts = [header];
  const readTraceIds: string[] = [];
  let used = header.length;
  for (const run of runs) {
    const page = withItems ? await readItems(services, bus, run, { after: 0, limit: ITEMS_PER_TRACE }) : { items: [] };
    const text = traceText(run, page.items as RunItem[]);
    // whole traces only: a trace that no longer fits is left out (and not reported as read)
    if (used + text.length + 2 > TOTAL_CHARS) break;
    parts.push(text);
    readTraceIds.push(run.id);
    used += text.length + 2;
  }
  return { text: parts.join('\n\n'), readTraceIds };
}
