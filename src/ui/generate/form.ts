// The generation form: text fields parsed and validated with a message per field, before any
// request reaches the worker.
import type { GenerationModel, GenerationRequest } from './types';

export interface GenerationForm {
  prompt: string;
  maxTokens: string;
  temperature: string;
  topK: string;
  topP: string;
  seed: string;
}

export type GenerationField = keyof GenerationForm;

export const DEFAULT_FORM: GenerationForm = { prompt: 'The ', maxTokens: '40', temperature: '0.8', topK: '20', topP: '1', seed: '1' };

export const MAX_TEMPERATURE = 10;
const MAX_SEED = 2 ** 32 - 1;

function int(text: string): number | null {
  const t = text.trim();
  return /^\d+$/.test(t) ? Number(t) : null;
}

/** The request, or a message per invalid field. */
export function parseGenerationForm(
  f: GenerationForm,
  m: Pick<GenerationModel, 'contextLength' | 'vocabSize'>,
): { request: GenerationRequest | null; errors: Partial<Record<GenerationField, string>> } {
  const errors: Partial<Record<GenerationField, string>> = {};
  if (f.prompt.length === 0) errors.prompt = 'Type a prompt: generation continues it.';
  const maxGen = Math.max(1, m.contextLength - 1);
  const maxTokens = int(f.maxTokens);
  if (maxTokens === null || maxTokens < 1 || maxTokens > maxGen)
    errors.maxTokens = `A whole number from 1 to ${maxGen} (the context holds ${m.contextLength} tokens).`;
  const temperature = f.temperature.trim() === '' ? NaN : Number(f.temperature);
  if (!(Number.isFinite(temperature) && temperature >= 0 && temperature <= MAX_TEMPERATURE))
    errors.temperature = `A number from 0 (greedy) to ${MAX_TEMPERATURE}.`;
  const topK = int(f.topK);
  if (topK === null || topK > m.vocabSize) errors.topK = `A whole number from 0 (no limit) to ${m.vocabSize}.`;
  const topP = f.topP.trim() === '' ? NaN : Number(f.topP);
  if (!(Number.isFinite(topP) && topP > 0 && topP <= 1)) errors.topP = 'A number above 0 and at most 1 (1 = no limit).';
  const seed = int(f.seed);
  if (seed === null || seed > MAX_SEED) errors.seed = `A whole number from 0 to ${MAX_SEED}.`;
  if (Object.keys(errors).length) return { request: null, errors };
  return { request: { prompt: f.prompt, maxTokens: maxTokens!, temperature, topK: topK!, topP, seed: seed! }, errors };
}
