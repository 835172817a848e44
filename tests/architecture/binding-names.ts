// Binding names say what a binding holds (issue 19): no kernel declares a storage binding, a
// uniform or a uniform field named like a numbered slot (`s1`, `i1`, `c0`: a lower-case letter
// then digits), a name that needs a comment table to decode.
import type { KernelSpec } from '../../src/gpu/kernel-interface';

/** A lower-case letter then digits: a numbered slot, not a name. */
export const SLOT_NAME = /^[a-z]\d+$/;

/** One line per storage binding, uniform or uniform field of `spec` named like a slot, naming the kernel. */
export function slotNamedBindings(spec: KernelSpec): string[] {
  const bad: string[] = [];
  for (const [v, u] of Object.entries(spec.uniforms)) {
    if (SLOT_NAME.test(v)) bad.push(`kernel ${spec.name}: uniform ${v}`);
    for (const [field] of u.fields) if (SLOT_NAME.test(field)) bad.push(`kernel ${spec.name}: uniform ${v} field ${field}`);
  }
  for (const [entry, decls] of Object.entries(spec.entries))
    for (const [name] of decls) if (SLOT_NAME.test(name)) bad.push(`kernel ${spec.name}.${entry}: storage binding ${name}`);
  return bad;
}
