// The ajv 8 class for a schema's dialect: draft-07 (ajv's default class) when its $schema
// names draft-07, as the drift study's schemas often do; JSON Schema 2020-12 otherwise.
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

export function ajvFor(schema, options) {
  const draft07 = typeof schema?.$schema === 'string' && schema.$schema.includes('draft-07');
  return draft07 ? new Ajv(options) : new Ajv2020(options);
}
