// Compiles every schema of the contracts (openapi.yaml and, when present, admin.yaml) with Ajv — a
// JSON Schema validator other than kin-openapi — and checks every `example` against its schema.
//
// OpenAPI 3.0 schemas are JSON Schema draft-04/07 with extras. Ajv's default class (draft-07) knows
// the one extra that changes validation, `nullable` (and refuses it without a sibling `type`, which is
// what issue 18 found); the annotation-only extras (`example`, `x-*`, …) are registered as keywords
// without validation, and the OpenAPI formats as formats that accept anything. Component schemas live
// under `definitions` of one schema per document, so `$ref`s resolve as in the document.
//
// Run: `node --test` in tools/lint (scripts/check does).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import Ajv from "ajv";
import YAML from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const documents = ["openapi.yaml", "admin.yaml"].filter((f) => existsSync(join(root, f)));

// OpenAPI 3.0 schema keywords that JSON Schema draft-07 lacks and that do not validate.
const annotations = ["example", "xml", "externalDocs", "discriminator"];
const formats = ["int32", "int64", "float", "double", "byte", "binary", "date", "date-time", "password", "uri", "email", "uuid"];

/** Rewrites local component refs to point into the document's Ajv schema; collects x- keys. */
function rewrite(node, id, extensions) {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, id, extensions));
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith("x-")) extensions.add(k);
    if (k === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/")) {
      out[k] = `${id}#/definitions/${v.slice("#/components/schemas/".length)}`;
    } else if (k === "example" || k === "enum" || k === "default") {
      out[k] = v; // values, not schemas
    } else {
      out[k] = rewrite(v, id, extensions);
    }
  }
  return out;
}

/** Every schema of the document outside components/schemas: [where, schema]. */
function inlineSchemas(doc) {
  const found = [];
  const visit = (node, where) => {
    if (node === null || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      if (k === "schema" && v && typeof v === "object" && !Array.isArray(v)) found.push([`${where}/schema`, v]);
      else if (k !== "example" && k !== "examples") visit(v, `${where}/${k}`);
    }
  };
  visit(doc.paths, "#/paths");
  const c = doc.components ?? {};
  for (const part of ["parameters", "headers", "responses", "requestBodies"]) visit(c[part], `#/components/${part}`);
  return found;
}

/** Loads a contract into a fresh strict Ajv: the component schemas are one schema with id `file`. */
function load(file) {
  const doc = YAML.parse(readFileSync(join(root, file), "utf8"));
  assert.match(doc.openapi, /^3\.0\./, `${file}: an OpenAPI 3.0 document`);
  const extensions = new Set();
  const definitions = rewrite(doc.components?.schemas ?? {}, file, extensions);
  const inline = inlineSchemas(doc).map(([where, s]) => [where, rewrite(s, file, extensions)]);
  const ajv = new Ajv({ strict: true, allErrors: true });
  for (const k of [...annotations, ...extensions]) ajv.addKeyword(k);
  for (const f of formats) ajv.addFormat(f, true);
  ajv.addSchema({ $id: file, definitions });
  return { doc, ajv, definitions, inline };
}

for (const file of documents) {
  test(`${file}: every component schema compiles with Ajv and accepts its example`, () => {
    const { ajv, definitions } = load(file);
    assert.ok(Object.keys(definitions).length > 0, `${file} has component schemas`);
    for (const [name, schema] of Object.entries(definitions)) {
      const validate = ajv.getSchema(`${file}#/definitions/${name}`);
      assert.ok(validate, `${name} compiles`);
      if (schema.example !== undefined) {
        assert.ok(validate(schema.example), `${name}'s example: ${ajv.errorsText(validate.errors)}`);
      }
    }
  });

  test(`${file}: every inline schema (parameters, bodies, responses, headers) compiles with Ajv`, () => {
    const { ajv, inline } = load(file);
    assert.ok(inline.length > 0, `${file} has inline schemas`);
    for (const [where, schema] of inline) {
      assert.doesNotThrow(() => ajv.compile(schema), where);
    }
  });
}

test("openapi.yaml: AnyValue accepts every JSON value, nulls nested anywhere (as kin-openapi does)", () => {
  const { ajv } = load("openapi.yaml");
  const anyValue = ajv.getSchema("openapi.yaml#/definitions/AnyValue");
  const values = [null, true, false, 0, -1.5, 1e300, "", "x", [], [null], [[null, [null]], 1, "a", {}], {}, { a: null }, { a: [null, { b: null }] }];
  for (const v of values) assert.ok(anyValue(v), `AnyValue accepts ${JSON.stringify(v)}`);
  const run = ajv.getSchema("openapi.yaml#/definitions/Run");
  const rec = { object: "hermes.run", run_id: "run_4e685a726271445348426a4a70783364", status: "queued", updated_at: 1, created_at: 1 };
  assert.ok(run({ ...rec, session_id: null, model: [null] }), ajv.errorsText(run.errors));
  assert.equal(run({ ...rec, session_id: null }), false, "model is required");
});

test("the Ajv check fails on the form issue 18 found (nullable without type)", () => {
  const ajv = new Ajv({ strict: true });
  assert.throws(() => ajv.compile({ nullable: true }), /"nullable" cannot be used without "type"/);
});
