// vitest stands in this module for `server-only`: tests run server modules outside Next, where they belong.
export {};
