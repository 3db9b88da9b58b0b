/**
 * A request the service layer refuses, in words both front ends show as they are: the CLI
 * as its one-line reason, the admin API as the problem's detail (404 for `not_found`, 422 for
 * `invalid`, naming `field`).
 */
export class ServiceError extends Error {
  readonly kind: 'not_found' | 'invalid';
  readonly field?: string;

  constructor(kind: 'not_found' | 'invalid', message: string, field?: string) {
    super(message);
    this.kind = kind;
    this.field = field;
    this.name = 'ServiceError';
  }
}

export const companyNotFound = (id: number | string) =>
  new ServiceError('not_found', `company ${id} not found`);
export const keyNotFound = (id: number | string) =>
  new ServiceError('not_found', `key ${id} not found`);
