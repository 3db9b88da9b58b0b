import { Type } from 'typebox';
import { ProblemSchema, withoutId } from './common.ts';

/** `GET /healthz`: the process answers. */
export const AliveSchema = Type.Object({ status: Type.Literal('ok') });

/**
 * `GET /readyz`: each dependency's state (`database`, or `primary` and `replica`; `redis` when
 * rate limits are shared), and `degraded` while one the instance can serve without is down.
 */
export const ReadySchema = Type.Object({
  status: Type.Enum(['ok', 'degraded'], { type: 'string' }),
  checks: Type.Record(Type.String(), Type.Enum(['ok', 'unreachable'], { type: 'string' })),
});

/**
 * Not ready: the database is unreachable, behind the code, or refuses the service's login. The
 * problem model itself: the probes are served beside the API, where its shared models are not.
 */
export const NotReadySchema = withoutId(ProblemSchema);
