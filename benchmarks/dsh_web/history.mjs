// What dsh's own web app fetches to show a session's turns, scrolled end to end: its page asks
// `POST /api/session.history` for the tail (50 messages) and then for each page before it (`beforeSeq`)
// until `hasMore` is false. Each answer here comes from the pinned release's own host code
// (`createApiProxy` and `toFetchHandler` of @deepseek-ai/dsh-host-apiproxy) over the log read by its
// JSONL persistence, so the bytes are the response bodies its server sends (it does not compress them).
// Input: persistence root, session id, compression. Output: one JSON line {pages: [{bytes, events}]}.
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'
import UserQuestions from '@deepseek-ai/dsh-user-questions'
import { createApiProxy, toFetchHandler } from '@deepseek-ai/dsh-host-apiproxy'

const [root, id, compression] = process.argv.slice(2)
// No tool plugin is composed, so no tool event gets a host-computed `view` and dsh says so on stderr once
// per event; its pages are therefore at their lightest (the budget against them at its strictest).
console.error = () => {}
const ctx = new Context()
ctx.plugin(SessionStore)
ctx.plugin(JsonlSessionPersistence, { root, compression })
ctx.plugin(UserQuestions) // createApiProxy registers its question provider on it
await new Promise((resolve) => ctx.inject(['sessionPersistence', 'sessions', 'userQuestions'], () => resolve()))
const handler = toFetchHandler(createApiProxy(ctx, { defaultModelSelection: () => ({ provider: 'none', model: 'none' }) }))

const pages = []
let beforeSeq
for (let n = 0; ; n++) {
  const payload = beforeSeq === undefined ? { sessionId: id } : { sessionId: id, beforeSeq }
  const response = await handler.fetch(new Request('http://127.0.0.1/api/session.history', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: `page-${n}`, method: 'session.history', payload }),
  }))
  const body = new Uint8Array(await response.arrayBuffer())
  const answer = JSON.parse(new TextDecoder().decode(body))
  if (answer.result?.ok !== true) throw new Error(`session.history failed: ${JSON.stringify(answer).slice(0, 2000)}`)
  const { events, hasMore } = answer.result.value
  pages.push({ bytes: body.length, events: events.length })
  if (!hasMore) break
  beforeSeq = events[0].event.seq
}
process.stdout.write(JSON.stringify({ pages }) + '\n')
process.exit(0)
