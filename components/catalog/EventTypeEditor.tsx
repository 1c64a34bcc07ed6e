"use client";
// Catalogue an event type or change one (engineers and admins): the fields of POST and PUT /api/v1/event-types, the
// schema and example typed as JSON. The API's refusal shows under the field it names: a schema that does not
// compile (ajv's message), an example that does not match its schema (each mismatch), and nothing is saved.
import { useId, useState } from "react";
import { useRouter } from "next/navigation";
import { ApiError, apiFetch } from "@/lib/client/api";
import { btn, btnDanger, input } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";
import { SavedStatus } from "@/components/ui/useInlineForm";
import { Field, FormActions, FormAlert } from "@/components/ui/form";
import { Modal } from "@/components/ui/Modal";

type Existing = { type: string; description: string; schema: unknown; example: unknown; summaryFields: string[]; deprecated: boolean };
type FieldName = "type" | "description" | "schema" | "example" | "summaryFields";
type Errors = Partial<Record<FieldName, string>>;

const FIELDS: FieldName[] = ["type", "description", "schema", "example", "summaryFields"];
const pretty = (v: unknown) => (v === null || v === undefined ? "" : JSON.stringify(v, null, 2));

/** The refusal's messages by field: details name `body.<field>…` (the request's shape) or `<field>…` (the schema checks). */
function errorsOf(err: unknown): { fields: Errors; other: string | null } {
  if (!(err instanceof ApiError)) return { fields: {}, other: err ? "The request failed; nothing was saved." : null };
  const fields: Errors = {};
  for (const d of Array.isArray(err.details) ? (err.details as { path?: string; message?: string }[]) : []) {
    const path = (d.path ?? "").replace(/^body\./, "");
    const f = FIELDS.find((x) => path === x || path.startsWith(`${x}/`) || path.startsWith(`${x}.`));
    if (!f) continue;
    const where = path.slice(f.length).replace(/^\./, "/");
    const line = `${where ? `${where} ` : ""}${d.message ?? ""}`.trim();
    fields[f] = fields[f] ? `${fields[f]}; ${line}` : line;
  }
  return Object.keys(fields).length ? { fields, other: null } : { fields, other: err.message };
}

/** "" → undefined (leave out), else parsed JSON, or a refusal under the field. */
function parseJson(text: string, name: FieldName, errs: Errors): unknown {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    errs[name] = `not valid JSON: ${(e as Error).message}`;
    return undefined;
  }
}

/** `onDone`: the form closes, with what was saved (nothing for a cancel). */
function EditorForm({ existing, onDone }: { existing?: Existing; onDone: (saved?: string) => void }) {
  const ids = useId();
  const router = useRouter();
  const [v, setV] = useState({
    type: existing?.type ?? "",
    description: existing?.description ?? "",
    schema: pretty(existing?.schema),
    example: pretty(existing?.example),
    summaryFields: existing?.summaryFields.join(", ") ?? "",
  });
  const [busy, setBusy] = useState(false);
  const [local, setLocal] = useState<Errors>({});
  const [error, setError] = useState<unknown>(null);
  const { fields: api, other } = errorsOf(error);
  const errs = { ...api, ...local };
  const set = (k: keyof typeof v) => (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => setV({ ...v, [k]: e.target.value });

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    const parseErrs: Errors = {};
    const schema = parseJson(v.schema, "schema", parseErrs);
    const example = parseJson(v.example, "example", parseErrs);
    setLocal(parseErrs);
    setError(null);
    if (Object.keys(parseErrs).length) return;
    const body = {
      description: v.description,
      // Editing: an emptied box removes the schema or example; creating: it is left out.
      ...(schema !== undefined ? { schema } : existing ? { schema: null } : {}),
      ...(example !== undefined ? { example } : existing ? { example: null } : {}),
      summaryFields: v.summaryFields.split(/[\s,]+/).filter(Boolean),
    };
    setBusy(true);
    try {
      if (existing) await apiFetch(`/api/v1/event-types/${encodeURIComponent(existing.type)}`, { method: "PUT", body });
      else await apiFetch("/api/v1/event-types", { body: { type: v.type.trim(), ...body } });
      router.refresh();
      onDone(existing ? `Saved: ${existing.type}.` : `Added ${v.type.trim()} to the catalog.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const area = `${input} min-h-32 font-mono text-xs`;
  return (
    <form onSubmit={submit} noValidate className="grid grid-cols-1 gap-3">
      {!existing && (
        <Field label="Type" errorId={`${ids}-type`} error={errs.type} hint="Dotted lower-case words, as producers publish it.">
          {/* No autoFocus: the dialog focuses its first field itself, and one focused before it looks records that field, not
              the New event type button, as what to give focus back to on closing. */}
          <input className={input} value={v.type} onChange={set("type")} placeholder="assignment.graded" />
        </Field>
      )}
      <Field label="Description" errorId={`${ids}-description`} error={errs.description}>
        <textarea className={`${input} min-h-16`} value={v.description} onChange={set("description")} placeholder="A teacher recorded a grade for a student." />
      </Field>
      <Field label="JSON Schema of data (2020-12, optional)" errorId={`${ids}-schema`} error={errs.schema} hint="Publishes whose data does not match are refused (422).">
        <textarea className={area} value={v.schema} onChange={set("schema")} spellCheck={false} placeholder='{"type": "object", "required": ["student_id"], …}' />
      </Field>
      <Field label="Example data (optional)" errorId={`${ids}-example`} error={errs.example} hint="Must match the schema; districts test their verifier with it.">
        <textarea className={area} value={v.example} onChange={set("example")} spellCheck={false} placeholder='{"student_id": "stu_1", …}' />
      </Field>
      <Field
        label="Summary fields (optional)"
        errorId={`${ids}-summaryFields`}
        error={errs.summaryFields}
        hint="JSON Pointers into data that lookup cards show, e.g. /student_id."
      >
        <input className={input} value={v.summaryFields} onChange={set("summaryFields")} placeholder="/student_id, /score" />
      </Field>
      <FormAlert>{other}</FormAlert>
      <FormActions busy={busy} submitLabel={existing ? "Save changes" : "Add event type"} onCancel={() => onDone()} />
    </form>
  );
}

export function NewEventTypeButton() {
  const [open, setOpen] = useState(false);
  // A save closes the dialog: without this line nothing would say it worked (focus is back on the button).
  const [saved, setSaved] = useState("");
  return (
    <>
      <LiveButton
        type="button"
        className={btn}
        onClick={() => {
          setSaved("");
          setOpen(true);
        }}
      >
        New event type
      </LiveButton>
      <SavedStatus>{saved}</SavedStatus>
      {open && (
        <Modal title="New event type" onClose={() => setOpen(false)} wide>
          <EditorForm
            onDone={(status) => {
              setSaved(status ?? "");
              setOpen(false);
            }}
          />
        </Modal>
      )}
    </>
  );
}

/** Edit, and delete (a type with events is kept, deprecated: the API says which it did). */
export function EventTypeActions({ existing }: { existing: Existing }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  async function restore() {
    try {
      await apiFetch(`/api/v1/event-types/${encodeURIComponent(existing.type)}`, { method: "PUT", body: { deprecated: false } });
      setNote(null);
      router.refresh();
    } catch (err) {
      setNote((err as Error).message);
    }
  }
  async function remove() {
    if (!window.confirm(`Delete ${existing.type} from the catalog? If events of it exist it is kept and marked deprecated instead.`)) return;
    try {
      const r = await apiFetch<{ message: string }>(`/api/v1/event-types/${encodeURIComponent(existing.type)}`, { method: "DELETE" });
      setNote(r.message);
      router.refresh();
    } catch (err) {
      setNote((err as Error).message);
    }
  }
  return (
    <div className="flex flex-wrap items-center gap-2">
      <LiveButton
        type="button"
        className={btn}
        onClick={() => {
          setNote(null);
          setOpen(true);
        }}
      >
        Edit
      </LiveButton>
      {existing.deprecated ? (
        <LiveButton type="button" className={btn} onClick={restore}>
          Undeprecate
        </LiveButton>
      ) : (
        <LiveButton type="button" className={btnDanger} onClick={remove}>
          Delete or deprecate
        </LiveButton>
      )}
      {/* Always in the page, so a screen reader reads what is put in it. */}
      <span role="status" className="text-xs text-slate-700 empty:sr-only">
        {note}
      </span>
      {open && (
        <Modal title={`Edit ${existing.type}`} onClose={() => setOpen(false)} wide>
          <EditorForm
            existing={existing}
            onDone={(status) => {
              if (status) setNote(status);
              setOpen(false);
            }}
          />
        </Modal>
      )}
    </div>
  );
}
