import { Type } from 'typebox';
import { SCOPES } from '../keys/scopes.ts';
import { Timestamp } from './common.ts';

export const MeSchema = Type.Object({
  company: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    timezone: Type.String({ description: 'IANA time-zone name.' }),
  }),
  api_key: Type.Object({
    id: Type.Integer(),
    name: Type.String({ description: 'Label given when the key was created.' }),
    scopes: Type.Array(Type.Enum([...SCOPES])),
    last_used_at: Timestamp,
  }),
  access: Type.Literal('read-only'),
  rate_limit: Type.Object({ per_minute: Type.Integer(), per_hour: Type.Integer() }),
});
