// A thread to work in: pick an agent, send messages and watch the replies stream in; open an
// existing thread (#/chat/<thread id>) and its history loads from the items API, newest page
// first and older pages on scroll, then continues live from the stream where the page ended.
// Waiting runs are answered in place; a running run can be steered or cancelled, any sealed
// run forked.
import { authHeaders, errorOf } from './api.js?v=__CONSOLE_VERSION__';
import { el } from './dom.js?v=__CONSOLE_VERSION__';
import { renderPending } from './pending-view.js?v=__CONSOLE_VERSION__';
import { renderRunPanel } from './run-panel.js?v=__CONSOLE_VERSION__';
import { openThreadStream } from './thread-stream.js?v=__CONSOLE_VERSION__';
import { createThreadView } from './thread-view.js?v=__CONSOLE_VERSION__';
import { card } from './ui-kit.js?v=__CONSOLE_VERSION__';

const LIVE_WAIT_MS = 5000;
const OLDER_PAGE = 50;
const enc = encodeURIComponent;

export async function renderChat(ctx, threadParam) {
  const agentSelect = el('select', { id: 'agent', 'aria-label': 'Agent' });
  const newThread = el('button', { type: 'button', id: 'new-thread', className: 'secondary', text: 'New thread' });
  const runPanel = el('div', { id: 'run-panel' });
  const title = el('span', { id: 'thread-title', className: 'muted', text: 'Pick an agent, then send a message.' });
  const statusBadge = el('span', { id: 'run-status', className: 'badge', hidden: 'hidden' });
  const streamState = el('span', { id: 'stream-state', className: 'muted' });
  const older = el('button', { type: 'button', id: 'older', className: 'secondary outline older', hidden: 'hidden', text: 'Load older items' });
  const items = el('ol', { id: 'items', className: 'items', 'aria-live': 'polite', 'aria-label': 'Thread items', tabindex: '0' });
  const pending = el('div', { id: 'pending', className: 'pending', hidden: 'hidden' });
  const message = el('textarea', { id: 'message', rows: '3', placeholder: 'Message (Ctrl+Enter sends)', 'aria-label': 'Message' });
  const steer = el('input', { type: 'checkbox', id: 'steer', role: 'switch' });
  const send = el('button', { type: 'submit', id: 'send', text: 'Send' });
  const composer = el('form', { id: 'composer', className: 'composer' }, message, el('div', { className: 'actions' }, send, el('label', {}, steer, ' Steer the running run')));

  ctx.page.replaceChildren(
    el('h2', { text: 'Chat', tabindex: '-1' }),
    el('div', { className: 'split' },
      el('aside', {}, card('Agent', agentSelect, newThread), card('Run', runPanel)),
      el('section', {}, el('div', { className: 'thread-head' }, title, statusBadge, streamState), older, items, pending, composer)),
  );

  const state = { threadId: null, runs: [], olderRun: -1, stream: null, live: null, agents: [] };
  const assetUrls = new Map(); // asset id → promise of a blob: URL (asset bytes never change)
  /** An asset's bytes fetched with the session's credential, shown through a blob: URL. */
  const loadAsset = (assetId) => {
    if (!assetUrls.has(assetId)) {
      const loading = fetch(`/api/v1/assets/${enc(assetId)}/content`, { headers: authHeaders(ctx.session), credentials: 'omit' }).then(async (response) => {
        if (!response.ok) throw await errorOf(response);
        return URL.createObjectURL(await response.blob());
      });
      loading.catch(() => assetUrls.delete(assetId));
      assetUrls.set(assetId, loading);
    }
    return assetUrls.get(assetId);
  };
  const view = createThreadView({
    loadAsset,
    list: items,
    badge: statusBadge,
    pending,
    renderPending: (panel, run) => renderPending(panel, run, resume),
    onRun: (run) => renderRunPanel(runPanel, run, runActions),
  });
  renderRunPanel(runPanel, null, null);

  const runActions = {
    cancel: (run) => ctx.guarded(async () => view.showRun(await ctx.send('POST', `/api/v1/runs/${enc(run.id)}/cancel`, undefined, { headers: ctx.idem() }))),
    fork: (run, text) =>
      ctx.guarded(async () => {
        const answer = await ctx.send('POST', `/api/v1/runs/${enc(run.id)}/fork`, { agent_id: run.agent_id, payload: { content: [{ type: 'text', text }] } }, { headers: ctx.idem() });
        ctx.navigate(`#/chat/${enc(answer.thread.id)}`);
      }),
    lineage: (run) => ctx.guarded(async () => (await ctx.get(`/api/v1/runs/${enc(run.id)}/lineage`)).items),
  };

  async function resume(runId, batch) {
    const successor = await ctx.send('POST', `/api/v1/runs/${enc(runId)}/resume`, batch, { headers: ctx.idem() }).catch((error) => {
      ctx.showError(error);
      throw error;
    });
    view.showRun(successor);
  }

  function closeThread() {
    state.stream?.close();
    state.stream = null;
    state.threadId = null;
    state.live = null;
    view.reset();
    older.hidden = true;
    renderRunPanel(runPanel, null, null);
  }
  ctx.onLeave(() => {
    closeThread();
    // The page is left: its blob: URLs are released with it.
    for (const loading of assetUrls.values()) loading.then((url) => URL.revokeObjectURL(url), () => undefined);
  });

  function follow(threadId, after) {
    let established;
    state.live = new Promise((resolve) => (established = resolve));
    state.stream = openThreadStream({
      threadId,
      after,
      headers: () => authHeaders(ctx.session),
      errorOf,
      onState: (text) => (streamState.textContent = text ? `stream: ${text}` : ''),
      onFatal: (error) => ctx.showError(error),
      onEvent: (type, event) => {
        if (type === 'stream.live') established();
        else if (type === 'stream.reset') ctx.showError(new Error('the stream was reset: reload the thread to see what was missed'));
        else if (type === 'stream.error') streamState.textContent = `stream: ${event.reason ?? 'error'}, reconnecting`;
        else view.apply(type, event);
      },
    });
  }

  /** Older items: earlier pages of the oldest run shown, then the runs before it. */
  async function loadOlder() {
    if (state.olderRun < 0) return;
    const run = state.runs[state.olderRun];
    const first = view.firstOrdinal(run.id);
    if (first === null || first > 1) {
      const page = await ctx.get(first === null ? `/api/v1/runs/${enc(run.id)}/items` : `/api/v1/runs/${enc(run.id)}/items?before=${first}&limit=${OLDER_PAGE}`);
      view.keepPosition(() => page.items.forEach((item) => view.addItem(run.id, item)));
    }
    // A run whose first item is shown (or that has none) is done: the next click goes to the run before it.
    if ((view.firstOrdinal(run.id) ?? 1) <= 1) state.olderRun -= 1;
    older.hidden = state.olderRun < 0;
  }
  // One load at a time, whether a click or scrolling to the top asked: two loads of the same run
  // would both step back a run, and the run between would never be shown.
  const loadOlderOnce = () => {
    if (older.hidden || older.disabled) return;
    older.disabled = true;
    void ctx.guarded(loadOlder).finally(() => (older.disabled = false));
  };
  older.addEventListener('click', loadOlderOnce);
  items.addEventListener('scroll', () => {
    if (items.scrollTop === 0) loadOlderOnce();
  });

  async function openThread(threadId) {
    closeThread();
    const thread = await ctx.get(`/api/v1/threads/${enc(threadId)}`);
    state.threadId = thread.id;
    title.textContent = `Thread ${thread.id}`;
    title.dataset.thread = thread.id;
    state.runs = (await ctx.get(`/api/v1/runs?thread_id=${enc(thread.id)}&limit=100`)).items ?? [];
    view.knowRuns(state.runs.map((r) => r.id));
    const newest = state.runs[state.runs.length - 1];
    if (!newest) {
      follow(thread.id, null);
      return;
    }
    const page = await ctx.get(`/api/v1/runs/${enc(newest.id)}/items`);
    for (const item of page.items) view.addItem(newest.id, item);
    view.showRun(page.run);
    if (!state.agents.some((a) => a.id === agentSelect.value) || agentSelect.value !== page.run.agent_id) agentSelect.value = page.run.agent_id;
    state.olderRun = view.firstOrdinal(newest.id) > 1 ? state.runs.length - 1 : state.runs.length - 2;
    older.hidden = state.olderRun < 0;
    items.scrollTop = items.scrollHeight;
    follow(thread.id, page.resume_after);
  }

  async function startThread() {
    const session = await ctx.send('POST', '/api/v1/sessions', {});
    const thread = await ctx.send('POST', `/api/v1/sessions/${enc(session.id)}/threads`, {});
    history.replaceState(null, '', `#/chat/${enc(thread.id)}`);
    closeThread();
    state.threadId = thread.id;
    title.textContent = `Thread ${thread.id}`;
    title.dataset.thread = thread.id;
    follow(thread.id, null);
  }

  async function sendMessage(text) {
    if (!state.threadId) await startThread();
    // Without a resume point the stream carries what is published after it was answered: wait
    // until it is established so the run's first events are not missed.
    await Promise.race([state.live, new Promise((resolve) => setTimeout(resolve, LIVE_WAIT_MS))]);
    const delivery = steer.checked ? { delivery: 'steer' } : {};
    const answer = await ctx.send('POST', `/api/v1/threads/${enc(state.threadId)}/inbox`, { agent_id: agentSelect.value, ...delivery, payload: { content: [{ type: 'text', text }] } }, { headers: ctx.idem() });
    if (answer.run) {
      view.knowRuns([answer.run.id]);
      view.showRun(answer.run);
    }
  }

  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text || !agentSelect.value) return;
    send.disabled = true;
    void ctx.guarded(async () => {
      await sendMessage(text);
      message.value = '';
    }).finally(() => (send.disabled = false));
  });
  message.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) composer.requestSubmit();
  });
  newThread.addEventListener('click', () => void ctx.guarded(async () => {
    closeThread();
    await startThread();
    message.focus();
  }));

  state.agents = ((await ctx.get('/api/v1/agents?limit=100')).items ?? []).filter((a) => !a.archived_at);
  agentSelect.replaceChildren(...state.agents.map((a) => el('option', { value: a.id, text: a.name })));
  const ready = state.agents.length > 0;
  for (const control of [agentSelect, newThread, message, send]) control.disabled = !ready;
  if (!ready) title.textContent = 'No agents in this workspace yet: create one under Agents.';
  if (threadParam) await openThread(threadParam);
  else message.focus();
}
