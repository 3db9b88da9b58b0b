import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERRORS, type ErrorCode, problem } from '../../src/schemas/problems.ts';
import { useApi } from '../helpers/api.ts';

/** Where a client reading a problem of a request to `/api/company/v1/leaves/9` lands. */
const resolved = (type: string) => new URL(type, 'http://api.test/api/company/v1/leaves/9');

/** The text of the element with `id`, tags dropped, spaces joined. */
function textOfAnchor(html: string, id: string): string | undefined {
  const match = new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`).exec(html);
  return match?.[1]
    ?.replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

describe('GET /docs/errors (where every problem type points)', () => {
  it('explains every code of the registry under the anchor its problems’ `type` names', async (t) => {
    const api = await useApi(t, 'sqlite');
    const res = await api.get('/docs/errors', null);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    for (const [code, { status, title }] of Object.entries(ERRORS)) {
      const type = resolved(problem(code as ErrorCode, 'detail').type);
      assert.equal(type.pathname, '/docs/errors', code);
      assert.equal(type.hash, `#${code}`);
      const text = textOfAnchor(res.body, code);
      assert.ok(text, `no entry with id="${code}"`);
      assert.ok(text.startsWith(`${code} ${status} ${title} Answered when `), text);
    }
    assert.equal(
      textOfAnchor(res.body, 'not_found'),
      'not_found 404 Not found Answered when no such path, or no record with this id in the key’s company (or a malformed id).',
    );
    // Nothing but the page: no script, nothing fetched from anywhere.
    assert.doesNotMatch(res.body, /<script|<link|<img|src=|https?:\/\//);
  });

  it('is the `type` of the problems the API answers', async (t) => {
    const api = await useApi(t, 'sqlite');
    const res = await api.get('/leaves/1', null);
    assert.equal(res.status, 401);
    assert.equal(res.json.type, '/docs/errors#unauthenticated');
  });

  it('is linked, code by code, from the reference page’s description', async (t) => {
    const api = await useApi(t, 'sqlite');
    const description: string = (await api.get('/openapi.json', null)).json.info.description;
    for (const code of Object.keys(ERRORS)) {
      assert.ok(description.includes(`[${code}](/docs/errors#${code})`), code);
    }
    assert.ok(description.includes('[errors page](/docs/errors)'));
  });
});
