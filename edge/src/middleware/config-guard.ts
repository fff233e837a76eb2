// The Worker serves nothing while its configuration is unusable: a setting
// that does not parse, or no `database.crypto.encryption_key` (without it no
// sealed value could be written or read). Every request then answers 500
// naming the setting (never its value), and the isolate logs it once.
import { createMiddleware } from 'hono/factory';
import { ConfigError, envName } from '@edgemail/shared';
import { errorBody } from '../http/errors.js';
import { settingsOf } from '../settings.js';
import type { AppEnv, Bindings } from '../env.js';

const KEY_SETTING = 'database.crypto.encryption_key';
const problems = new WeakMap<Bindings, string | null>();

/** What is wrong with the configuration, for the client and the log; null when it is usable. */
function configProblem(env: Bindings): { client: string; log: string } | null {
  try {
    const { config } = settingsOf(env);
    if (config[KEY_SETTING] === '') {
      const text = `service misconfigured: ${KEY_SETTING} (${envName(KEY_SETTING)}) is not set`;
      return { client: text, log: `${text}; refusing every request until it is` };
    }
    return null;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return { client: `service misconfigured: invalid setting ${e.setting} (${e.env})`, log: `${e.message}; refusing every request until it is fixed` };
  }
}

/** @example app.use('*', requireUsableConfig()) // before every route, /health included */
export const requireUsableConfig = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    let problem = problems.get(c.env);
    if (problem === undefined) {
      const found = configProblem(c.env);
      if (found) console.error(found.log); // once per isolate and environment
      problem = found?.client ?? null;
      problems.set(c.env, problem);
    }
    if (problem) return c.json(errorBody(problem), 500);
    await next();
  });
