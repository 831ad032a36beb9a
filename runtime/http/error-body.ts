import { AppError, isAppError } from '../errors/index.js';
import type { HttpResponse } from './http-types.js';

/** The one place errors become responses: `{error: {code, message, request_id, details?}}`. */
export function errorResponse(error: unknown, requestId: string): { response: HttpResponse; internal: boolean } {
  const appError: AppError = isAppError(error) ? error : new AppError('internal', 'internal error');
  const body = {
    error: {
      code: appError.code,
      message: appError.message,
      request_id: requestId,
      ...(appError.details ? { details: appError.details } : {}),
    },
  };
  const headers: Record<string, string> = { ...(appError.headers ?? {}) };
  if (appError.code === 'unauthenticated') headers['www-authenticate'] ??= 'Bearer';
  if ((appError.code === 'unavailable' || appError.code === 'rate_limited') && !headers['retry-after']) headers['retry-after'] = '1';
  return { response: { status: appError.status, headers, body }, internal: !isAppError(error) };
}
