// Signing in and out, and the workspace picker. The svs_ token lives in sessionStorage only.
import { clearSession, request, saveSession } from './api.js?v=__CONSOLE_VERSION__';
import { el } from './dom.js?v=__CONSOLE_VERSION__';

/** POST /api/v1/auth/login; the session keeps the workspaces of the login response. */
export async function signIn(email, password) {
  const answer = await request('POST', '/api/v1/auth/login', { body: { email, password } });
  const memberships = (answer.memberships ?? []).map((w) => ({ id: w.id, name: w.name, role: w.role ?? '' }));
  const session = { token: answer.token, expiresAt: answer.expires_at, email: answer.user?.email ?? email, memberships, workspaceId: memberships[0]?.id ?? null };
  saveSession(session);
  return session;
}

/** POST /api/v1/auth/logout; the local session is dropped even when the request fails. */
export async function signOut(session) {
  try {
    await request('POST', '/api/v1/auth/logout', { session: { token: session.token } });
  } finally {
    clearSession();
  }
}

export function chooseWorkspace(session, workspaceId) {
  const next = { ...session, workspaceId };
  saveSession(next);
  return next;
}

/** Fills the <select> with the session's workspaces, the chosen one selected. */
export function renderWorkspaces(select, session) {
  select.replaceChildren(
    ...session.memberships.map((w) => el('option', { value: w.id, text: w.role ? `${w.name} (${w.role})` : w.name })),
  );
  if (session.workspaceId) select.value = session.workspaceId;
  select.disabled = session.memberships.length < 2;
}
