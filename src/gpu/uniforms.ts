// Small shape/scalar uniforms. Every dispatch of a plan gets a 256-byte slot in a pooled uniform
// buffer, allocated at init; per-step values (learning rate, step) are rewritten with writeBuffer.

/** A float field of a uniform; plain numbers are written as u32 (or i32 when negative). */
export interface F32Word {
  readonly f32: number;
}
export type UniformWord = number | F32Word;
export const f32 = (x: number): F32Word => ({ f32: x });

export const UNIFORM_SLOT_BYTES = 256;
const SLOTS_PER_CHUNK = 256;

export interface UniformSlot {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
  /** Rewrite the slot (queued; takes effect for work submitted afterwards). */
  write(words: readonly UniformWord[]): void;
}

export function packWords(words: readonly UniformWord[]): ArrayBuffer {
  if (words.length * 4 > UNIFORM_SLOT_BYTES) throw new Error(`uniform has ${words.length} words; at most ${UNIFORM_SLOT_BYTES / 4}`);
  const bytes = new ArrayBuffer(Math.max(16, Math.ceil((words.length * 4) / 16) * 16));
  const u = new Uint32Array(bytes);
  const i = new Int32Array(bytes);
  const f = new Float32Array(bytes);
  words.forEach((w, k) => {
    if (typeof w === 'number') {
      if (!Number.isInteger(w)) throw new Error(`uniform word ${k} = ${w} is not an integer; wrap floats in f32()`);
      // A typed array would wrap it silently (1e308 becomes 0): a config's validation bounds the values.
      if (w < -0x80000000 || w > 0xffffffff) throw new Error(`uniform word ${k} = ${w} does not fit 32 bits (i32 or u32)`);
      if (w < 0) i[k] = w;
      else u[k] = w;
    } else f[k] = w.f32;
  });
  return bytes;
}

export class UniformPool {
  private chunks: GPUBuffer[] = [];
  private used = SLOTS_PER_CHUNK;

  constructor(
    private readonly device: GPUDevice,
    private readonly createBuffer: (desc: GPUBufferDescriptor) => GPUBuffer,
  ) {}

  alloc(words: readonly UniformWord[]): UniformSlot {
    if (this.used === SLOTS_PER_CHUNK) {
      this.chunks.push(
        this.createBuffer({
          label: `uniforms#${this.chunks.length}`,
          size: SLOTS_PER_CHUNK * UNIFORM_SLOT_BYTES,
          usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        }),
      );
      this.used = 0;
    }
    const buffer = this.chunks[this.chunks.length - 1];
    const offset = this.used++ * UNIFORM_SLOT_BYTES;
    const device = this.device;
    const slot: UniformSlot = {
      buffer,
      offset,
      size: UNIFORM_SLOT_BYTES,
      write(w) {
        device.queue.writeBuffer(buffer, offset, new Uint8Array(packWords(w))); // a view: dawn.node aborts on a bare ArrayBuffer
      },
    };
    slot.write(words);
    return slot;
  }
}
