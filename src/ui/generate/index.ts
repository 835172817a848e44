// The generation panel, for the page to mount (see GenerationPanelProps and ./types).
export { GenerationPanel, type GenerationPanelProps, type TokenSelection } from './GenerationPanel';
export type { GeneratedPiece, GenerationDone, GenerationModel, GenerationRequest, GenerationSink, GenerationStart } from './types';
export { generationSnapshots, generationTrace, pieceRanges } from './trace';
