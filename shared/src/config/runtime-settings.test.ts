import { describe, expect, test } from 'vitest';
import { runtimeSettings } from './runtime-settings.js';
import { settings } from './settings.js';
import type { Setting } from './define.js';

describe('the settings changeable at run time', () => {
  test('are declared, and none is a secret', () => {
    for (const name of runtimeSettings) {
      expect(settings[name], name).toBeDefined();
      expect((settings[name] as Setting<unknown>).secret, name).not.toBe(true);
    }
  });
});
