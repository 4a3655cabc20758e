import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ValidationError } from '../util/errors.ts';
import type { ErrorStyle } from './route.ts';

/** The body of an error answer in a route's style. */
export function errorBody(style: ErrorStyle, err: AppError): Record<string, unknown> {
  if (err instanceof ValidationError && style !== 'status') {
    return { message: err.message, errors: err.errors, ...err.extra };
  }
  switch (style) {
    case 'status':
      return err instanceof ValidationError
        ? { status: false, error: err.message, errors: err.errors }
        : { status: false, error: err.message, ...err.extra };
    case 'success':
      return { success: false, error: err.message, error_code: err.code, ...err.extra };
    case 'campaign':
      return { message: err.message, success: false, ...err.extra };
    case 'trunk':
      return { error: err.message, ...err.extra };
    default:
      return { message: err.message, ...err.extra };
  }
}

/** Maps what fastify itself rejects (bad JSON, wrong content type, huge body) to engine errors. */
function fromFastify(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('The request body is not valid JSON.', 400, 'INVALID_JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ValidationError({ body: ['The request body is too large.'] });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ValidationError({ body: ['The request body must be JSON (Content-Type: application/json).'] });
    default:
      if (err.statusCode === 400 && err.message.includes('JSON')) {
        return new AppError('The request body is not valid JSON.', 400, 'INVALID_JSON');
      }
      return undefined;
  }
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const style = request.routeOptions.config?.errorStyle ?? 'default';
  let appError = error instanceof AppError ? error : fromFastify(error as FastifyError);
  if (!appError) {
    const status = (error as FastifyError).statusCode;
    if (status && status >= 400 && status < 500) {
      appError = new AppError((error as Error).message, status, 'BAD_REQUEST');
    } else {
      request.log.error({ err: error }, 'unhandled error');
      appError = new AppError('Internal server error.', 500, 'INTERNAL');
    }
  }
  if (appError.status >= 500) request.log.error({ err: appError }, 'request failed');
  void reply.code(appError.status).send(errorBody(style, appError));
}
