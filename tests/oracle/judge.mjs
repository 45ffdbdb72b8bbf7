// What real dsh does with each session artifact: the pinned release's own session code
// (package.json) loads it through `sessionPersistence.prepare(id)`, the call dsh's resume makes.
// Input: a JSON file of jobs {name, root, id, compression}; each job's root is a private copy,
// as prepare commits repairs to it. Output: one JSON line per job on stdout.
import { createHash } from 'node:crypto'
import { readFileSync, existsSync, writeSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import SessionStore from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-persistence-jsonl'

const digest = (path) => existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : null

async function judge({ root, id, compression, artifact }) {
  const ctx = new Context()
  ctx.plugin(SessionStore)
  ctx.plugin(JsonlSessionPersistence, { root, compression })
  const persistence = await new Promise((resolve) => ctx.inject(['sessionPersistence'], (c) => resolve(c.sessionPersistence)))
  const before = digest(artifact)
  let stored = null
  try {
    stored = (await persistence.readFrom(id, 0)).events.length
  } catch {}
  try {
    const preparation = await persistence.prepare(id)
    const loaded = preparation.session.log.length
    preparation[Symbol.dispose]()
    return { outcome: digest(artifact) === before ? 'accepted' : 'repaired', stored, loaded }
  } catch (error) {
    const outcome = error?.name === 'SessionFormatUnsupportedError' ? 'unsupported' : 'refused'
    return { outcome, error: error?.name ?? typeof error, reason: String(error?.message ?? error), stored }
  } finally {
    await ctx.dispose?.()
  }
}

const jobs = JSON.parse(readFileSync(process.argv[2], 'utf8'))
for (const job of jobs) {
  let result
  try {
    result = await judge(job)
  } catch (error) {
    result = { outcome: 'crashed', reason: String(error?.stack ?? error) }
  }
  // synchronously: process.exit drops what an asynchronous write to a pipe still holds
  writeSync(1, JSON.stringify({ name: job.name, ...result }) + '\n')
}
process.exit(0)
