/**
 * Reading a submitted form. `FormData.get` gives a string for a text field
 * and a File for a file input; the forms here have only text fields, so a
 * field that is missing (or, never, a file) reads as the fallback.
 */

/** The text of the field `name` in `form`, or `fallback` when there is none. */
export function formText(form: FormData, name: string, fallback = ''): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : fallback;
}
