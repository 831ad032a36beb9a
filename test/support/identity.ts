import pg from 'pg';
import {
  ID_PREFIX,
  hashPassword,
  insertMembership,
  insertOrganization,
  insertUser,
  insertWorkspace,
  newId,
  type MemberRole,
} from '../../runtime/index.js';

export interface Seeded {
  organization_id: string;
  workspace_id: string;
  admin: { id: string; email: string; password: string };
}

/** Inserts an organization, a workspace and an admin user straight into the database. */
export async function seedOrganization(databaseUrl: string, email = 'admin@example.com', password = 'admin-password'): Promise<Seeded> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const organization = await insertOrganization(pool, { id: newId(ID_PREFIX.organization), name: 'Org' });
    const user = await insertUser(pool, { id: newId(ID_PREFIX.user), organization_id: organization.id, email, password_hash: await hashPassword(password), organization_role: 'admin' });
    const workspace = await insertWorkspace(pool, { id: newId(ID_PREFIX.workspace), organization_id: organization.id, name: 'First', created_by_id: user.id });
    await insertMembership(pool, { workspace_id: workspace.id, user_id: user.id, role: 'admin' });
    return { organization_id: organization.id, workspace_id: workspace.id, admin: { id: user.id, email, password } };
  } finally {
    await pool.end();
  }
}

/** Adds a user of the organization with a role in the given workspaces. */
export async function addUser(databaseUrl: string, organizationId: string, email: string, password: string, roles: Record<string, MemberRole>): Promise<string> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const user = await insertUser(pool, { id: newId(ID_PREFIX.user), organization_id: organizationId, email, password_hash: await hashPassword(password), organization_role: 'member' });
    for (const [workspaceId, role] of Object.entries(roles)) await insertMembership(pool, { workspace_id: workspaceId, user_id: user.id, role });
    return user.id;
  } finally {
    await pool.end();
  }
}

/** A small API client for tests: JSON in and out, headers visible. */
export class Client {
  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  with(headers: Record<string, string>): Client {
    return new Client(this.base, { ...this.headers, ...headers });
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any }> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...this.headers, ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  get = (path: string, headers?: Record<string, string>) => this.call('GET', path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('POST', path, body, headers);
  patch = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('PATCH', path, body, headers);
  put = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('PUT', path, body, headers);
  delete = (path: string, headers?: Record<string, string>) => this.call('DELETE', path, undefined, headers);
}

/** Signs in and returns a client carrying the session token (and workspace header). */
export async function login(base: string, email: string, password: string, workspaceId?: string): Promise<Client> {
  const response = await new Client(base).post('/api/v1/auth/login', { email, password });
  if (response.status !== 201) throw new Error(`login failed: ${response.status} ${JSON.stringify(response.body)}`);
  return new Client(base, { authorization: `Bearer ${response.body.token}`, ...(workspaceId ? { 'x-workspace-id': workspaceId } : {}) });
}

/** Creates an API key through the API and returns a client that uses it. */
export async function apiKeyClient(session: Client, role?: MemberRole, name = 'test key'): Promise<{ client: Client; id: string; secret: string }> {
  const response = await session.post('/api/v1/api-keys', { name, ...(role ? { role } : {}) });
  if (response.status !== 201) throw new Error(`api key creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { client: new Client(session.base, { authorization: `Bearer ${response.body.secret}` }), id: response.body.api_key.id, secret: response.body.secret };
}
