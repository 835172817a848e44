// One sentence per config field, shown as its tooltip ("?" beside the label). A test checks that
// every field of the panel has one.
export const FIELD_HELP: Readonly<Record<string, string>> = {
  'model.attention':
    'Which keys each query reads. dense: every earlier key (t + 1). NSA: compressed blocks, the top-n selected blocks and a sliding window. Sliding window: the last w keys. MoBA: its own block and the k − 1 earlier blocks whose mean key scores highest (≤ k·B keys). DSA: the k earlier tokens a small indexer scores highest. Switch to compare them on the same model.',
  'model.window.w':
    'Window w: query t reads keys max(0, t − w + 1) … t and nothing older, min(w, t + 1) keys; one layer cannot reach a token w or more positions back. At most T (w = T is dense).',
  'model.moba.blockSize':
    'Block size B: keys are cut into blocks of B positions; a complete block is scored by the mean of its keys. A selected block costs B keys (the own block t mod B + 1). At most T; the last block may be partial.',
  'model.moba.topK':
    'Blocks k per query, its own (causally cut) block included: the other k − 1 are the complete earlier blocks whose mean key scores highest for the query’s group (ties to the earlier block). Costs at most k·B keys per query. At most ⌈T / B⌉.',
  'model.dsa.topK':
    'Tokens k per query: the main attention reads the k earlier tokens (itself a candidate) the indexer scores highest, min(k, t + 1) keys; ties go to the earlier token. k ≥ T is dense.',
  'model.dsa.indexHeads':
    'Indexer heads H_I: the index score of token s for query t is Σ_j w_tj·ReLU(q_tj · k_s) over these heads. Adds H_I·(d_I + 1) + d_I projection weights per layer row; costs no main keys.',
  'model.dsa.indexDim':
    'Width d_I of the indexer’s queries and its one key per token: every query reads all t + 1 indexer keys of this width (cheap: d_I ≤ dk, one key per token for all heads). Even (RoPE), ≤ dk.',
  'model.dsa.warmupSteps':
    'Optimizer steps of the dense warm-up: the main attention reads all t + 1 keys and stays frozen while only the indexer learns to match it; the sparse top-k phase starts after them.',
  'model.dsa.lossWeight':
    'λ: weight of the indexer’s KL loss towards the main attention’s distribution. It trains the indexer only (the main model never gets its gradient), so it changes no key count.',
  'model.vocabSize':
    'Rows of the token embedding and of the output layer; must cover every token id of the data (256 for bytes, 50257 for GPT-2 BPE).',
  'model.dim': 'Width C of the residual stream: the size of every token’s hidden vector between layers.',
  'model.nLayers': 'Transformer blocks, each an attention layer and a SwiGLU feed-forward layer with RMSNorm before each.',
  'model.nHeads': 'Query heads H per attention layer.',
  'model.nKvGroups':
    'K/V groups G (grouped-query attention): the H query heads share G key/value heads. NSA selects blocks per group, so all heads of a group read the same blocks.',
  'model.dk': 'Size of each query/key head vector; even, because RoPE rotates pairs of dimensions.',
  'model.dv': 'Size of each value head vector.',
  'model.ffnHidden': 'Hidden units of the SwiGLU feed-forward layer; 0 makes every layer attention-only (no MLP), as recall studies train.',
  'model.posEncoding':
    'RoPE rotates queries and keys by their position; none gives the model no position at all (the key convolution then carries order).',
  'model.shortConv':
    'Taps of a causal depthwise convolution on every key projection, before RoPE: each key also sees the tokens just before it, which lets one attention layer match a query to the token after its key. 0: none.',
  'data.recall.layout':
    'scattered: pairs among fillers, queries at the end. MQAR (Zoology): all pairs first, then the queries at power-law gaps, most of them close to the pairs.',
  'model.seqLen':
    'T: tokens per training sequence, and the longest context the model sees. NSA saves reads once T is large against l′·n + w.',
  'model.ropeTheta': 'Base of the rotary position embedding’s frequencies.',
  'model.normEps': 'Added to the mean square inside RMSNorm for stability.',
  'model.initStd': 'Standard deviation of the normal initialisation of the weight matrices.',
  'model.nsa.l': 'Compression block length l: each compressed key summarises l consecutive keys. Paper: 32.',
  'model.nsa.d': 'Compression stride d: a new compressed block starts every d tokens, so blocks overlap when d < l. Paper: 16.',
  'model.nsa.lSel': 'Selection block length l′: the unit the top-n selection reads in full. Paper: 64.',
  'model.nsa.nSel': 'Selected blocks n per query, the forced ones included; the rest are the highest-scoring candidates. Paper: 16.',
  'model.nsa.w': 'Sliding window w: every query also reads its last w keys. Paper: 512.',
  'model.nsa.phi':
    'How a block of l keys (and values) becomes one compressed key: their mean, or a learned MLP over the block with a position embedding.',
  'model.nsa.forceInit': 'Always select block 0 (the start of the sequence), as the paper does.',
  'model.nsa.forceLocal': 'Always select the block holding the query and this many − 1 blocks before it.',
  'model.nsa.sharedKV': 'One key/value projection shared by the three branches instead of one per branch (fewer parameters).',
  'model.nsa.gates':
    'Ablate the learned gates that mix the three branches: none (learned), force one branch (only it contributes) or freeze them to constants.',
  'train.steps': 'Optimizer steps; the learning-rate schedule (warmup, then cosine decay) spans them.',
  'train.batchSize': 'Sequences per micro-batch, processed in one forward and backward pass.',
  'train.gradAccum': 'Micro-batches whose gradients are summed before each optimizer step (effective batch = batch size × this).',
  'train.lrMax': 'Learning rate at the end of warmup (the peak of the schedule).',
  'train.lrMin': 'Learning rate the cosine decay reaches at the last step; ≤ the peak.',
  'train.warmupSteps': 'Steps of linear warmup from peak × start fraction to the peak; 0 starts at the peak.',
  'train.warmupStartFraction': 'Warmup starts at peak × this fraction, in (0, 1].',
  'train.shortSeqSteps':
    'Sequence-length warm-up: the run’s first this-many optimizer steps train on sequences of the short length (same weights, optimizer and learning-rate schedule), the rest at the model’s length. Evaluations always use the model’s length; selections are kept from the first full-length step. 0 or absent: none.',
  'train.shortSeqLen':
    'The warm-up’s sequence length: below the model’s, and a length the model and the task accept (a passkey or recall task must fit it).',
  'train.shortSeqPairs':
    'Recall tasks: the key-value pairs (and at most as many queries) of the warm-up’s sequences, at most the task’s: a curriculum that learns the lookup on a few pairs at the short length first (Zoology trains MQAR on a mixture of pair counts). 0 or absent: the task’s own.',
  'train.weightDecay': 'AdamW’s decoupled weight decay on the weight matrices.',
  'train.beta1': 'Adam’s decay of the first moment (the running mean of gradients).',
  'train.beta2': 'Adam’s decay of the second moment (the running mean of squared gradients).',
  'train.eps': 'Added to the square root of the second moment in Adam’s update.',
  'train.gradClip': 'Scale the gradients down when their global L2 norm exceeds this; 0 disables clipping.',
  'train.seed': 'Seeds the initialisation and the data order: the same seed and config give the same bits.',
  'train.evalEvery': 'Steps between validation losses (and task accuracies); 0 disables evaluation.',
  'train.evalBatches': 'Held-out batches averaged for each validation loss.',
  'train.logEvery': 'Steps between heartbeats (loss, tokens/s, gate means) in the run log.',
  'data.source':
    'Training text: the Brown corpus, random or copy tokens (sanity checks), your own .txt file, or a task that needs attention beyond the window: associative recall or passkey retrieval.',
  'data.tokenizer': 'Bytes (256 ids, no merges) or GPT-2’s BPE (50257 ids; needs a vocabulary of that size).',
  'data.recall.keys': 'Distinct key tokens K; at least the number of pairs.',
  'data.recall.values': 'Value tokens V; guessing gives accuracy 1/V (the chance line).',
  'data.recall.fillers': 'Filler tokens between the pairs; 1 = a constant filler.',
  'data.recall.pairs': 'Key→value pairs per sequence: the queried ones plus distractors.',
  'data.recall.queries': 'Queries at the end of each sequence; each asks for an earlier key’s value. At most the pairs.',
  'data.recall.minDistance':
    'Each queried value lies at least this far before its query; above nLayers·(w − 1) the window alone cannot reach it.',
  'data.recall.minStart': 'Queried keys lie at this position or later (e.g. l′, out of the always-selected block 0); 0 = anywhere.',
  'data.passkey.digits': 'Digit tokens D of the passkey; guessing a digit gives accuracy 1/D (the chance line), a whole key D^−k.',
  'data.passkey.keyLength': 'Digits k of the passkey: stored after the needle marker, asked for after the query marker at the end.',
  'data.passkey.fillers': 'Filler tokens of the haystack, drawn at random around the needle; 1 = a constant filler.',
  'data.passkey.minDepth':
    'The needle lies at this depth or deeper: 0 = the first token, 1 = right before the query; far from the query, the window alone cannot reach it.',
  'data.passkey.maxDepth': 'The needle lies at this depth or shallower, in [0, 1] and at least the shallowest depth.',
};
