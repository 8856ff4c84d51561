// Checking an answer against the JSON schema an interrupt publishes (`Interrupt.response_schema`,
// pydantic's `TypeAdapter(...).json_schema()`), before it is sent: one clear message per bad
// field. The subset pydantic writes for the human-in-the-loop decisions and tool arguments:
// `$ref` into `$defs` (any `#/…` pointer), `oneOf`/`anyOf` (with a `discriminator` the branch
// its property names), `allOf`, `type` (one or a list), `const`, `enum`, `properties`,
// `required`, `additionalProperties` and `items`. Other keywords (lengths, bounds, patterns) are
// not checked here: the program checks the answer again when it resumes.

import type { Json } from "./json";

/** A field that does not match, by its path in the answer (`edited_action.args.city`). */
export interface FieldError {
  path: string;
  message: string;
}

type Schema = { [key: string]: Json };

const isObject = (v: unknown): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** `a.b`, `a[0]`, `a["odd key"]`. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return base ? `${base}.${key}` : key;
  return `${base}[${JSON.stringify(key)}]`;
}

const TYPE_WORDS: Record<string, string> = {
  object: "an object",
  array: "a list",
  string: "text",
  integer: "a whole number",
  number: "a number",
  boolean: "true or false",
  null: "null",
};

function hasType(v: Json, type: string): boolean {
  switch (type) {
    case "object":
      return isObject(v);
    case "array":
      return Array.isArray(v);
    case "string":
      return typeof v === "string";
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "null":
      return v === null;
    default:
      return true; // a type this subset does not know: not checked
  }
}

const show = (v: Json) => JSON.stringify(v);
const oneOfWords = (values: Json[]) => (values.length === 1 ? `must be ${show(values[0])}` : `must be one of ${values.map(show).join(", ")}`);

/** Resolves a `$ref` (`#/$defs/Name`, any JSON pointer into the root schema). */
function resolve(root: Schema, ref: string): Schema | string {
  if (!ref.startsWith("#")) return `cannot follow $ref ${ref} (only refs into the schema itself)`;
  let at: Json = root;
  const parts = ref.slice(1).split("/").slice(1);
  for (const raw of parts) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(at) || !(part in at)) return `the schema's $ref ${ref} points at nothing`;
    at = at[part];
  }
  return isObject(at) ? at : `the schema's $ref ${ref} is not a schema`;
}

class Checker {
  private readonly errors: FieldError[] = [];
  private depth = 0;

  constructor(private readonly root: Schema) {}

  run(value: Json): FieldError[] {
    this.check(this.root, value, "");
    // One message per field: the first found.
    const seen = new Set<string>();
    return this.errors.filter((e) => !seen.has(e.path) && (seen.add(e.path), true));
  }

  private fail(path: string, message: string) {
    this.errors.push({ path, message });
  }

  private check(schema: Json, value: Json, path: string) {
    if (!isObject(schema)) return; // `true`, `{}`-less or malformed: accepts anything
    if (++this.depth > 64) {
      this.depth--;
      return this.fail(path, "the schema refers to itself too deeply to check");
    }
    try {
      this.checkIn(schema, value, path);
    } finally {
      this.depth--;
    }
  }

  private checkIn(schema: Schema, value: Json, path: string) {
    if (typeof schema.$ref === "string") {
      const target = resolve(this.root, schema.$ref);
      if (typeof target === "string") return this.fail(path, target);
      this.check(target, value, path);
    }
    if (Array.isArray(schema.allOf)) for (const s of schema.allOf) this.check(s, value, path);
    const union = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
    if (union) {
      if (!this.checkUnion(schema, union, value, path)) return;
    }
    if ("const" in schema && show(schema.const) !== show(value)) return this.fail(path, oneOfWords([schema.const]));
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => show(e) === show(value))) return this.fail(path, oneOfWords(schema.enum));
    const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t) => typeof t === "string") : [];
    if (types.length && !types.some((t) => hasType(value, t as string))) {
      return this.fail(path, `must be ${types.map((t) => TYPE_WORDS[t as string] ?? t).join(" or ")}`);
    }
    if (isObject(value)) this.checkObject(schema, value, path);
    if (Array.isArray(value) && schema.items !== undefined) value.forEach((item, i) => this.check(schema.items, item, joinPath(path, i)));
  }

  private checkObject(schema: Schema, value: { [key: string]: Json }, path: string) {
    const props = isObject(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) if (typeof key === "string" && !(key in value)) this.fail(joinPath(path, key), "required");
    }
    for (const [key, v] of Object.entries(value)) {
      if (key in props) this.check(props[key], v, joinPath(path, key));
      else if (schema.additionalProperties === false) this.fail(joinPath(path, key), "not allowed here");
      else if (isObject(schema.additionalProperties)) this.check(schema.additionalProperties, v, joinPath(path, key));
    }
  }

  /** A union: the branch the discriminator names, else any branch that matches. */
  private checkUnion(schema: Schema, branches: Json[], value: Json, path: string): boolean {
    const disc = isObject(schema.discriminator) ? schema.discriminator : null;
    const prop = disc && typeof disc.propertyName === "string" ? disc.propertyName : null;
    if (disc !== null && prop !== null) {
      const tags = branches.map((b) => this.tagOf(b, prop, disc));
      if (!isObject(value)) {
        this.fail(path, "must be an object");
        return false;
      }
      const known = tags.filter((t): t is Json => t !== undefined);
      if (!(prop in value)) {
        this.fail(joinPath(path, prop), `required: ${oneOfWords(known).replace(/^must be /, "")}`);
        return false;
      }
      const i = tags.findIndex((t) => t !== undefined && show(t) === show(value[prop]));
      if (i < 0) {
        this.fail(joinPath(path, prop), oneOfWords(known));
        return false;
      }
      this.check(branches[i], value, path);
      return true;
    }
    // No discriminator: the first branch that matches; else the closest one's complaints.
    let best: FieldError[] | null = null;
    for (const b of branches) {
      const sub = new Checker(this.root);
      sub.depth = this.depth;
      sub.check(b, value, path);
      if (sub.errors.length === 0) return true;
      if (best === null || sub.errors.length < best.length) best = sub.errors;
    }
    const atRoot = branches.map((b) => this.rootTypes(b)).flat();
    if (atRoot.length && !atRoot.some((t) => hasType(value, t))) {
      this.fail(path, `must be ${[...new Set(atRoot)].map((t) => TYPE_WORDS[t] ?? t).join(" or ")}`);
    } else if (best) this.errors.push(...best);
    return false;
  }

  /** The value of `prop` a branch requires (`const`, a one-value `enum`, or the mapping's key). */
  private tagOf(branch: Json, prop: string, disc: Schema): Json | undefined {
    if (isObject(disc.mapping) && isObject(branch) && typeof branch.$ref === "string") {
      const key = Object.entries(disc.mapping).find(([, ref]) => ref === branch.$ref)?.[0];
      if (key !== undefined) return key;
    }
    const s = isObject(branch) && typeof branch.$ref === "string" ? resolve(this.root, branch.$ref) : branch;
    if (!isObject(s) || !isObject(s.properties) || !isObject(s.properties[prop])) return undefined;
    const p = s.properties[prop];
    if ("const" in p) return p.const;
    if (Array.isArray(p.enum) && p.enum.length === 1) return p.enum[0];
    return undefined;
  }

  /** The types a branch allows at its top (for "must be text or null"). */
  private rootTypes(branch: Json): string[] {
    const s = isObject(branch) && typeof branch.$ref === "string" ? resolve(this.root, branch.$ref) : branch;
    if (!isObject(s)) return [];
    if (typeof s.type === "string") return [s.type];
    return Array.isArray(s.type) ? s.type.filter((t): t is string => typeof t === "string") : [];
  }
}

/** The fields of `value` that do not match `schema` (empty: it matches, as far as the subset goes). */
export function validate(schema: Json, value: Json): FieldError[] {
  return isObject(schema) ? new Checker(schema).run(value) : [];
}
