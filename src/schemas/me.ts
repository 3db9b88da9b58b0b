import { Type } from 'typebox';
import { SCOPES } from '../keys/scopes.ts';
import { model } from './common.ts';

export const MeSchema = model(
  'Me',
  Type.Object(
    {
      company: Type.Object({
        id: Type.Integer(),
        name: Type.String(),
        timezone: Type.String({
          description: 'IANA time-zone name.',
          examples: ['Europe/Istanbul'],
        }),
      }),
      api_key: Type.Object({
        id: Type.Integer(),
        name: Type.String({ description: 'Label given when the key was created.' }),
        scopes: Type.Array(Type.Enum([...SCOPES], { type: 'string' })),
        last_used_at: Type.String({
          format: 'date-time',
          description: 'The time of this very request.',
          examples: ['2026-02-20T08:00:00Z'],
        }),
      }),
      access: Type.Literal('read-only'),
      rate_limit: Type.Object(
        { per_minute: Type.Integer(), per_hour: Type.Integer() },
        { description: 'This key’s limits: accepted requests in any 60 s and any 3600 s.' },
      ),
    },
    { description: 'The key in use, its company, its access mode and its rate limits.' },
  ),
);
