// The generation panel, for the page to mount (see GenerationPanelProps and ./types).
export { GenerationPanel, type GenerationPanelProps, type TokenSelection } from './GenerationPanel';
export { generationSnapshots, generationTrace, pieceRanges } from './trace';
export type { GeneratedPiece, GenerationDone, GenerationModel, GenerationRequest, GenerationSink, GenerationStart } from './types';
