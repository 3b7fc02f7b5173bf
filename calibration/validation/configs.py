"""The validation configurations: one list, read by the training worker, the sweep runner and the
scenario generator, so the measured run and the stepsim scenario can never disagree.

Each configuration is a plain dict. `world` 1 means plain single-GPU training (no DDP wrapper, no
communication); `world` 2 means DDP over the two GPUs of one HGX H200 host.

No torch import here: this file must load on machines without PyTorch.
"""
from __future__ import annotations

import copy

VOCAB = 50304  # GPT-2's 50257 padded to a multiple of 64, as nanoGPT does


def _swiglu_ffn(hidden: int) -> int:
    """8/3·hidden rounded up to a multiple of 256 (SCENARIO.md's default for swiglu)."""
    raw = (8 * hidden + 2) // 3
    return ((raw + 255) // 256) * 256


def _cfg(cid, world, layers, hidden, heads, seq_len, micro_batch, *, kv_heads=None, mlp="gelu",
         norm="layernorm", ffn_hidden=None, grad_accum=1, bucket_cap_mb=25.0,
         gradient_as_bucket_view=False, activation_checkpointing="none", tied_embeddings=False,
         compute_dtype="bf16", param_dtype="fp32", optimizer_impl="fused", grad_clip=0.0, compile=None, fp8="none"):
    if ffn_hidden is None:
        ffn_hidden = 4 * hidden if mlp == "gelu" else _swiglu_ffn(hidden)
    return {
        "id": cid,
        "world": world,
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads if kv_heads is not None else heads,
        "ffn_hidden": ffn_hidden,
        "vocab": VOCAB,
        "seq_len": seq_len,
        "mlp": mlp,
        "norm": norm,
        "tied_embeddings": bool(tied_embeddings),
        "micro_batch": micro_batch,
        "grad_accum": grad_accum,
        "param_dtype": param_dtype,
        "compute_dtype": compute_dtype,
        "optimizer": "adamw",
        "optimizer_impl": optimizer_impl,  # torch.optim.AdamW(fused=True), or its default foreach path
        "grad_clip": float(grad_clip),  # clip_grad_norm_(max_norm) before the step; 0: none
        # torch.compile(model, fullgraph=True, dynamic=False, mode=compile) when set (the loss and optimizer eager)
        "compile": compile,
        "activation_checkpointing": activation_checkpointing,
        "bucket_cap_mb": float(bucket_cap_mb),
        "first_bucket_mb": 1.0,  # torch's default; not changed by this suite
        "gradient_as_bucket_view": bool(gradient_as_bucket_view),
        # FP8 linears as torchao's Float8Linear runs them in eager mode (calibration/pytorch/fp8_linear.py): none,
        # tensorwise or rowwise; every bias-free Linear with dimensions divisible by 16, the LM head included
        "fp8": fp8,
    }


# Order: DDP configurations first (they are the point of the suite), then single GPU.
CONFIGS = [
    # --- 2 GPUs, DDP -------------------------------------------------------------------------------
    # GPT-2 small (124M) at seq 1024, micro-batch 8: the bucket-size and bucket-view knobs.
    _cfg("d2-l12-h768-s1024-mb8-b25", 2, 12, 768, 12, 1024, 8),
    _cfg("d2-l12-h768-s1024-mb8-b1", 2, 12, 768, 12, 1024, 8, bucket_cap_mb=1),
    _cfg("d2-l12-h768-s1024-mb8-b100", 2, 12, 768, 12, 1024, 8, bucket_cap_mb=100),
    _cfg("d2-l12-h768-s1024-mb8-b25-view", 2, 12, 768, 12, 1024, 8, gradient_as_bucket_view=True),
    # tiny and host-bound: 6 layers, one sequence of 1024
    _cfg("d2-l6-h768-s1024-mb1-b25", 2, 6, 768, 12, 1024, 1),
    # GPT-2 medium-like (24 × 1024)
    _cfg("d2-l24-h1024-s1024-mb4-b25", 2, 24, 1024, 16, 1024, 4),
    _cfg("d2-l24-h1024-s2048-mb8-b25-view", 2, 24, 1024, 16, 2048, 8, gradient_as_bucket_view=True),
    _cfg("d2-l6-h1024-s2048-mb8-b25", 2, 6, 1024, 16, 2048, 8),
    _cfg("d2-l12-h1024-s2048-mb4-b1", 2, 12, 1024, 16, 2048, 4, bucket_cap_mb=1),
    # 24 × 1536 (~0.75B)
    _cfg("d2-l24-h1536-s2048-mb2-b25", 2, 24, 1536, 16, 2048, 2),
    # GPT 1.3B-like (24 × 2048)
    _cfg("d2-l24-h2048-s2048-mb4-b25", 2, 24, 2048, 16, 2048, 4),
    _cfg("d2-l24-h2048-s2048-mb4-b100-view", 2, 24, 2048, 16, 2048, 4, bucket_cap_mb=100,
         gradient_as_bucket_view=True),
    _cfg("d2-l24-h2048-s1024-mb1-b25", 2, 24, 2048, 16, 1024, 1),
    # 2560 wide, 20 heads (~1.5B / ~2.1B)
    _cfg("d2-l16-h2560-s2048-mb2-b25", 2, 16, 2560, 20, 2048, 2),
    _cfg("d2-l24-h2560-s1024-mb1-b25", 2, 24, 2560, 20, 1024, 1),
    _cfg("d2-l12-h2560-s2048-mb1-b1-view", 2, 12, 2560, 20, 2048, 1, bucket_cap_mb=1,
         gradient_as_bucket_view=True),
    # Llama-style: SwiGLU + RMSNorm + GQA
    _cfg("d2-l16-h2048-s2048-mb4-b25-swiglu-gqa4", 2, 16, 2048, 16, 2048, 4, kv_heads=4,
         mlp="swiglu", norm="rmsnorm"),
    _cfg("d2-l24-h2560-s1024-mb2-b100-view-swiglu-gqa4", 2, 24, 2560, 20, 1024, 2, kv_heads=4,
         mlp="swiglu", norm="rmsnorm", bucket_cap_mb=100, gradient_as_bucket_view=True),
    # gradient accumulation (no_sync on all but the last micro-step)
    _cfg("d2-l24-h1024-s2048-mb4-b25-ga2", 2, 24, 1024, 16, 2048, 4, grad_accum=2),
    _cfg("d2-l24-h2048-s1024-mb2-b25-ga4", 2, 24, 2048, 16, 1024, 2, grad_accum=4),
    # activation checkpointing under DDP (the 1.4B model): full and selective
    _cfg("d2-l24-h2048-s2048-mb4-b25-acfull", 2, 24, 2048, 16, 2048, 4, activation_checkpointing="full"),
    _cfg("d2-l24-h2048-s2048-mb4-b25-acsel", 2, 24, 2048, 16, 2048, 4, activation_checkpointing="selective"),
    # held out: added after the model of commit c3362f1, predicted and committed before they were measured
    # (results/validation/heldout/), with shapes, sequence lengths and bucket sizes no calibration measured
    _cfg("d2-l32-h2048-s4096-mb1-b50", 2, 32, 2048, 16, 4096, 1, bucket_cap_mb=50),
    _cfg("d2-l20-h3072-s2048-mb2-b25", 2, 20, 3072, 24, 2048, 2),
    _cfg("d2-l12-h1536-s1024-mb8-b10", 2, 12, 1536, 12, 1024, 8, bucket_cap_mb=10),
    _cfg("d2-l16-h1536-s4096-mb1-b25-swiglu-gqa4", 2, 16, 1536, 12, 4096, 1, kv_heads=3, mlp="swiglu",
         norm="rmsnorm"),
    # held out, sixth round: added after the fifth was measured, to test the DDP settings' what-ifs on GPU-bound
    # steps (the table's bucket pairs were all host-bound): bucket size, bucket view, micro-batch and accumulation
    # under no_sync, predicted and committed before they were measured (results/validation/heldout6/)
    _cfg("d2-l24-h2048-s2048-mb4-b100", 2, 24, 2048, 16, 2048, 4, bucket_cap_mb=100),
    _cfg("d2-l24-h2048-s2048-mb4-b10", 2, 24, 2048, 16, 2048, 4, bucket_cap_mb=10),
    _cfg("d2-l24-h2048-s2048-mb4-b25-view", 2, 24, 2048, 16, 2048, 4, gradient_as_bucket_view=True),
    _cfg("d2-l24-h2048-s2048-mb2-b25", 2, 24, 2048, 16, 2048, 2),
    _cfg("d2-l24-h2048-s2048-mb2-b25-ga2", 2, 24, 2048, 16, 2048, 2, grad_accum=2),
    _cfg("d2-l16-h2560-s2048-mb2-b100", 2, 16, 2560, 20, 2048, 2, bucket_cap_mb=100),
    # held out, second round: added after commit 690c12d to test the host-bound split (`stepsim run` warns when the
    # host is busy 75% of the step or more), predicted and committed before they were measured
    _cfg("d2-l8-h1024-s1024-mb2-b25", 2, 8, 1024, 16, 1024, 2),
    _cfg("d2-l16-h1280-s2048-mb2-b25", 2, 16, 1280, 10, 2048, 2),
    _cfg("d2-l12-h2048-s1024-mb2-b50", 2, 12, 2048, 16, 1024, 2, bucket_cap_mb=50),
    _cfg("d2-l16-h2560-s1024-mb4-b25", 2, 16, 2560, 20, 1024, 4),
    _cfg("d2-l12-h1536-s2048-mb4-b50", 2, 12, 1536, 12, 2048, 4, bucket_cap_mb=50),
    # --- 1 GPU, no DDP --------------------------------------------------------------------------------
    _cfg("s1-l12-h768-s1024-mb8", 1, 12, 768, 12, 1024, 8),
    _cfg("s1-l6-h768-s1024-mb1", 1, 6, 768, 12, 1024, 1),
    _cfg("s1-l24-h1024-s2048-mb4", 1, 24, 1024, 16, 2048, 4),
    _cfg("s1-l24-h2048-s2048-mb4", 1, 24, 2048, 16, 2048, 4),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu-gqa4", 1, 16, 2048, 16, 2048, 4, kv_heads=4, mlp="swiglu",
         norm="rmsnorm"),
    _cfg("s1-l12-h1536-s1024-mb4-ga4", 1, 12, 1536, 16, 1024, 4, grad_accum=4),
    # activation checkpointing: full (each block recomputed in backward) and selective (the attention core)
    _cfg("s1-l24-h1024-s2048-mb4-acfull", 1, 24, 1024, 16, 2048, 4, activation_checkpointing="full"),
    _cfg("s1-l24-h2048-s2048-mb4-acfull", 1, 24, 2048, 16, 2048, 4, activation_checkpointing="full"),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu-gqa4-acfull", 1, 16, 2048, 16, 2048, 4, kv_heads=4, mlp="swiglu",
         norm="rmsnorm", activation_checkpointing="full"),
    _cfg("s1-l24-h2048-s2048-mb4-acsel", 1, 24, 2048, 16, 2048, 4, activation_checkpointing="selective"),
    _cfg("s1-l12-h768-s1024-mb8-acsel", 1, 12, 768, 12, 1024, 8, activation_checkpointing="selective"),
    # held out (above)
    _cfg("s1-l8-h4096-s2048-mb2", 1, 8, 4096, 32, 2048, 2),
    _cfg("s1-l12-h1024-s4096-mb2", 1, 12, 1024, 16, 4096, 2),
    # held out, second round (above)
    _cfg("s1-l16-h1280-s1024-mb4", 1, 16, 1280, 10, 1024, 4),
    _cfg("s1-l20-h1536-s2048-mb2", 1, 20, 1536, 12, 2048, 2),
    _cfg("s1-l4-h2048-s2048-mb1", 1, 4, 2048, 16, 2048, 1),
    _cfg("s1-l12-h3072-s2048-mb2", 1, 12, 3072, 24, 2048, 2),
    _cfg("s1-l24-h1280-s2048-mb4", 1, 24, 1280, 10, 2048, 4),
    # held out, third round: added after commit 64be853 to test the host-bound range (`stepsim run` gives the step
    # with the host at the profile's host_cost_spread) and shapes no run had (hidden 5120 and 1792, sequences of
    # 8192, SwiGLU without GQA), predicted and committed before they were measured (results/validation/heldout3/)
    _cfg("s1-l6-h5120-s2048-mb1", 1, 6, 5120, 40, 2048, 1),
    _cfg("s1-l16-h2048-s8192-mb1", 1, 16, 2048, 16, 8192, 1),
    _cfg("s1-l12-h1792-s2048-mb4", 1, 12, 1792, 14, 2048, 4),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l8-h1024-s1024-mb1", 1, 8, 1024, 16, 1024, 1),
    _cfg("s1-l12-h1280-s512-mb4", 1, 12, 1280, 10, 512, 4),
    # held out, fourth round: added after commit 065ce13 (`stepsim validate` sets the change one setting makes
    # against the measured change) to test what-if predictions: each differs from a measured GPU-bound row, or from
    # another of these, in one setting a user tunes (micro-batch, gradient accumulation, activation checkpointing),
    # predicted and committed before they were measured (results/validation/heldout4/)
    _cfg("s1-l24-h2048-s2048-mb2", 1, 24, 2048, 16, 2048, 2),
    _cfg("s1-l24-h2048-s2048-mb2-ga2", 1, 24, 2048, 16, 2048, 2, grad_accum=2),
    _cfg("s1-l24-h2048-s2048-mb8", 1, 24, 2048, 16, 2048, 8),
    _cfg("s1-l12-h3072-s2048-mb2-acfull", 1, 12, 3072, 24, 2048, 2, activation_checkpointing="full"),
    _cfg("s1-l12-h3072-s2048-mb2-acsel", 1, 12, 3072, 24, 2048, 2, activation_checkpointing="selective"),
    _cfg("s1-l16-h2048-s8192-mb1-acsel", 1, 16, 2048, 16, 8192, 1, activation_checkpointing="selective"),
    _cfg("s1-l6-h5120-s2048-mb2", 1, 6, 5120, 40, 2048, 2),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu-ga2", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm", grad_accum=2),
    _cfg("s1-l24-h1280-s2048-mb4-acfull", 1, 24, 1280, 10, 2048, 4, activation_checkpointing="full"),
    # held out, fifth round: added after the fourth was measured, to test the splits of one global batch between
    # micro-batch and accumulation (`stepsim validate` pairs them since this round) and what-ifs of the model (context
    # length, depth, GQA), predicted and committed before they were measured (results/validation/heldout5/)
    _cfg("s1-l24-h2048-s2048-mb1-ga4", 1, 24, 2048, 16, 2048, 1, grad_accum=4),
    _cfg("s1-l24-h2048-s2048-mb1", 1, 24, 2048, 16, 2048, 1),
    _cfg("s1-l24-h2048-s4096-mb2", 1, 24, 2048, 16, 4096, 2),
    _cfg("s1-l12-h2048-s2048-mb4", 1, 12, 2048, 16, 2048, 4),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu", 1, 16, 2048, 16, 2048, 4, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l16-h2560-s2048-mb1-swiglu-ga2", 1, 16, 2560, 20, 2048, 1, mlp="swiglu", norm="rmsnorm", grad_accum=2),
    _cfg("s1-l12-h3072-s2048-mb1-ga2", 1, 12, 3072, 24, 2048, 1, grad_accum=2),
    # the precisions and the tied head, first measured with traces to build their model from (run 77; not held
    # out): fp16 autocast with GradScaler, bf16 parameters without autocast, the LM head tied to the token embedding
    _cfg("s1-l4-h2048-s2048-mb1-fp16", 1, 4, 2048, 16, 2048, 1, compute_dtype="fp16"),
    _cfg("s1-l4-h2048-s2048-mb1-pbf16", 1, 4, 2048, 16, 2048, 1, param_dtype="bf16"),
    _cfg("s1-l4-h2048-s2048-mb1-tied", 1, 4, 2048, 16, 2048, 1, tied_embeddings=True),
    _cfg("s1-l12-h2048-s2048-mb4-fp16", 1, 12, 2048, 16, 2048, 4, compute_dtype="fp16"),
    _cfg("s1-l12-h2048-s2048-mb4-pbf16", 1, 12, 2048, 16, 2048, 4, param_dtype="bf16"),
    # held out, seventh round: the precisions and the tied head on other models (SwiGLU and RMSNorm, hidden 4096,
    # accumulation under GradScaler, GPT-2 small tied as nanoGPT trains it), each one setting from a measured row,
    # predicted and committed after run 77's model was built and before they were measured (results/validation/heldout7/)
    _cfg("s1-l24-h2048-s2048-mb4-fp16", 1, 24, 2048, 16, 2048, 4, compute_dtype="fp16"),
    _cfg("s1-l24-h2048-s2048-mb4-pbf16", 1, 24, 2048, 16, 2048, 4, param_dtype="bf16"),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu-fp16", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm",
         compute_dtype="fp16"),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu-pbf16", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm",
         param_dtype="bf16"),
    _cfg("s1-l8-h4096-s2048-mb2-fp16", 1, 8, 4096, 32, 2048, 2, compute_dtype="fp16"),
    # FP8 linears (issue 27), eager, one GPU: GPT-2 small, where the casts cost far more than the GEMMs save, and
    # wider models, where the GEMMs take a larger share
    _cfg("s1-l12-h768-s1024-mb8-fp8tw", 1, 12, 768, 12, 1024, 8, fp8="tensorwise"),
    _cfg("s1-l12-h768-s1024-mb8-fp8rw", 1, 12, 768, 12, 1024, 8, fp8="rowwise"),
    _cfg("s1-l8-h4096-s2048-mb2-fp8tw", 1, 8, 4096, 32, 2048, 2, fp8="tensorwise"),
    _cfg("s1-l8-h4096-s2048-mb2-fp8rw", 1, 8, 4096, 32, 2048, 2, fp8="rowwise"),
    # the widest that fits beside its fp32 AdamW states: the shape closest to an FP8 win in eager mode
    _cfg("s1-l2-h8192-s2048-mb4", 1, 2, 8192, 64, 2048, 4),
    _cfg("s1-l2-h8192-s2048-mb4-fp8tw", 1, 2, 8192, 64, 2048, 4, fp8="tensorwise"),
    _cfg("s1-l24-h2048-s2048-mb2-ga2-fp16", 1, 24, 2048, 16, 2048, 2, grad_accum=2, compute_dtype="fp16"),
    _cfg("s1-l24-h1280-s2048-mb4-tied", 1, 24, 1280, 10, 2048, 4, tied_embeddings=True),
    _cfg("s1-l12-h768-s1024-mb8-tied", 1, 12, 768, 12, 1024, 8, tied_embeddings=True),
    # held out, eighth round: torch.optim.AdamW as PyTorch runs it by default on CUDA (foreach, not fused=True), each
    # one setting from a measured row, its model written from PyTorch's source (_multi_tensor_adam, GradScaler.step's
    # unscale and .item()) before any foreach step ran on a GPU (results/validation/heldout8/)
    _cfg("s1-l24-h2048-s2048-mb4-foreach", 1, 24, 2048, 16, 2048, 4, optimizer_impl="foreach"),
    _cfg("s1-l24-h1280-s2048-mb4-foreach", 1, 24, 1280, 10, 2048, 4, optimizer_impl="foreach"),
    _cfg("s1-l12-h768-s1024-mb8-foreach", 1, 12, 768, 12, 1024, 8, optimizer_impl="foreach"),
    _cfg("s1-l24-h2048-s2048-mb4-fp16-foreach", 1, 24, 2048, 16, 2048, 4, compute_dtype="fp16",
         optimizer_impl="foreach"),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu-foreach", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm",
         optimizer_impl="foreach"),
    _cfg("s1-l24-h2048-s2048-mb4-pbf16-foreach", 1, 24, 2048, 16, 2048, 4, param_dtype="bf16",
         optimizer_impl="foreach"),
    _cfg("s1-l24-h2048-s2048-mb2-ga2-foreach", 1, 24, 2048, 16, 2048, 2, grad_accum=2, optimizer_impl="foreach"),
    # held out, ninth round: gradient clipping (torch.nn.utils.clip_grad_norm_, after scaler.unscale_ under fp16), each
    # one setting from a measured row, its model written from PyTorch's source before any ran (results/validation/heldout9/)
    _cfg("s1-l24-h2048-s2048-mb4-clip1", 1, 24, 2048, 16, 2048, 4, grad_clip=1.0),
    _cfg("s1-l24-h2048-s2048-mb4-foreach-clip1", 1, 24, 2048, 16, 2048, 4, optimizer_impl="foreach", grad_clip=1.0),
    _cfg("s1-l24-h2048-s2048-mb4-fp16-clip1", 1, 24, 2048, 16, 2048, 4, compute_dtype="fp16", grad_clip=1.0),
    _cfg("s1-l16-h2560-s2048-mb2-swiglu-clip1", 1, 16, 2560, 20, 2048, 2, mlp="swiglu", norm="rmsnorm", grad_clip=1.0),
    _cfg("s1-l12-h768-s1024-mb8-clip1", 1, 12, 768, 12, 1024, 8, grad_clip=1.0),
    # held out, tenth round: the norms' kernels priced by size and dtype, AdamW in a step's power state, bf16 foreach
    # passes (results/validation/heldout10/): widths, row counts and bf16 models no measured row had
    _cfg("s1-l16-h1536-s2048-mb4-pbf16", 1, 16, 1536, 12, 2048, 4, param_dtype="bf16"),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu-pbf16", 1, 16, 2048, 16, 2048, 4, mlp="swiglu", norm="rmsnorm",
         param_dtype="bf16"),
    _cfg("s1-l12-h3072-s2048-mb2-pbf16-foreach", 1, 12, 3072, 24, 2048, 2, param_dtype="bf16",
         optimizer_impl="foreach"),
    _cfg("s1-l24-h1024-s2048-mb4-pbf16", 1, 24, 1024, 16, 2048, 4, param_dtype="bf16"),
    _cfg("s1-l16-h1024-s4096-mb4", 1, 16, 1024, 16, 4096, 4),
    _cfg("s1-l8-h4096-s2048-mb2-pbf16", 1, 8, 4096, 32, 2048, 2, param_dtype="bf16"),
    _cfg("s1-l12-h768-s2048-mb8", 1, 12, 768, 12, 2048, 8),
    _cfg("s1-l24-h2048-s2048-mb4-pbf16-clip1", 1, 24, 2048, 16, 2048, 4, param_dtype="bf16", grad_clip=1.0),
    # held out, eleventh round: SwiGLU under autocast, its norm output cast for each of its two linears
    # (results/validation/heldout11/), at widths, lengths and head groupings no measured row had
    _cfg("s1-l12-h3072-s2048-mb2-swiglu", 1, 12, 3072, 24, 2048, 2, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l24-h1536-s2048-mb4-swiglu", 1, 24, 1536, 12, 2048, 4, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l16-h2048-s4096-mb2-swiglu-gqa4", 1, 16, 2048, 16, 4096, 2, kv_heads=4, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l8-h4096-s2048-mb2-swiglu-gqa8", 1, 8, 4096, 32, 2048, 2, kv_heads=8, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l16-h1024-s2048-mb8-swiglu", 1, 16, 1024, 16, 2048, 8, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu-fp16", 1, 16, 2048, 16, 2048, 4, mlp="swiglu", norm="rmsnorm",
         compute_dtype="fp16"),
    # held out, twelfth round: gradient accumulation over small micro-batches, AccumulateGrad's adds at their own
    # measured host cost (results/validation/heldout12/)
    _cfg("s1-l12-h2048-s2048-mb1-ga4", 1, 12, 2048, 16, 2048, 1, grad_accum=4),
    _cfg("s1-l24-h1024-s2048-mb2-ga4", 1, 24, 1024, 16, 2048, 2, grad_accum=4),
    _cfg("s1-l16-h1536-s2048-mb1-ga8", 1, 16, 1536, 12, 2048, 1, grad_accum=8),
    _cfg("s1-l8-h4096-s2048-mb1-ga4", 1, 8, 4096, 32, 2048, 1, grad_accum=4),
    _cfg("s1-l12-h768-s1024-mb2-ga4", 1, 12, 768, 12, 1024, 2, grad_accum=4),
    _cfg("s1-l24-h2048-s2048-mb1-ga2", 1, 24, 2048, 16, 2048, 1, grad_accum=2),
    _cfg("s1-l12-h3072-s2048-mb2-ga4", 1, 12, 3072, 24, 2048, 2, grad_accum=4),
    # held out, thirteenth round: the power state, attention at the clock each step's load sets, from light to heavy
    # loads and at head_dim 64, 96 and 128 (results/validation/heldout13/)
    _cfg("s1-l16-h1024-s8192-mb1", 1, 16, 1024, 16, 8192, 1),
    _cfg("s1-l12-h2048-s4096-mb2", 1, 12, 2048, 16, 4096, 2),
    _cfg("s1-l8-h3072-s4096-mb1", 1, 8, 3072, 24, 4096, 1),
    _cfg("s1-l24-h1536-s4096-mb2", 1, 24, 1536, 16, 4096, 2),
    _cfg("s1-l4-h6144-s2048-mb2", 1, 4, 6144, 48, 2048, 2),
    _cfg("s1-l32-h768-s2048-mb8", 1, 32, 768, 12, 2048, 8),
    # held out, fourteenth round: the power state with the busy time, idle headroom and copies (run 104), light to
    # heavy, bf16 and fp16, bf16 parameters (results/validation/heldout14/)
    _cfg("s1-l8-h1024-s2048-mb2", 1, 8, 1024, 16, 2048, 2),
    _cfg("s1-l12-h1536-s2048-mb2-pbf16", 1, 12, 1536, 12, 2048, 2, param_dtype="bf16"),
    _cfg("s1-l20-h1280-s4096-mb1", 1, 20, 1280, 20, 4096, 1),
    _cfg("s1-l6-h2560-s2048-mb2-fp16", 1, 6, 2560, 20, 2048, 2, compute_dtype="fp16"),
    _cfg("s1-l16-h1792-s2048-mb2-swiglu", 1, 16, 1792, 14, 2048, 2, mlp="swiglu", norm="rmsnorm"),
    _cfg("s1-l10-h4096-s1024-mb4", 1, 10, 4096, 32, 1024, 4),
    # torch.compile (issue 26): the whole model compiled with fullgraph=True, dynamic=False, the loss
    # and the fused AdamW eager; each next to a measured eager row. Predicted and committed before they were measured
    # (results/validation/compile/)
    _cfg("s1-l12-h768-s1024-mb8-cdefault", 1, 12, 768, 12, 1024, 8, compile="default"),
    _cfg("s1-l12-h768-s1024-mb8-cro", 1, 12, 768, 12, 1024, 8, compile="reduce-overhead"),
    _cfg("s1-l12-h2048-s2048-mb4-cdefault", 1, 12, 2048, 16, 2048, 4, compile="default"),
    _cfg("s1-l16-h2048-s2048-mb4-swiglu-cdefault", 1, 16, 2048, 16, 2048, 4, mlp="swiglu", norm="rmsnorm",
         compile="default"),
]

# A handful of quick ones to check the whole path (profiler, DDP, no_sync, GQA) before the sweep.
SMOKE = [
    _cfg("smoke-s1-l2-h512-s512-mb2-swiglu-gqa2", 1, 2, 512, 8, 512, 2, kv_heads=2, mlp="swiglu",
         norm="rmsnorm"),
    _cfg("smoke-s1-l4-h768-s1024-mb4", 1, 4, 768, 12, 1024, 4),
    _cfg("smoke-d2-l4-h768-s1024-mb4-b25", 2, 4, 768, 12, 1024, 4),
    _cfg("smoke-d2-l4-h768-s1024-mb2-b1-view-ga2", 2, 4, 768, 12, 1024, 2, bucket_cap_mb=1,
         gradient_as_bucket_view=True, grad_accum=2),
]


def all_configs(include_smoke: bool = True) -> list[dict]:
    out = CONFIGS + (SMOKE if include_smoke else [])
    return [copy.deepcopy(c) for c in out]


def by_id(cid: str) -> dict:
    for c in all_configs():
        if c["id"] == cid:
            return c
    raise KeyError(f"unknown configuration id {cid!r}")


def check(c: dict) -> None:
    """Reject a configuration the model cannot build (so it fails before a GPU is touched)."""
    if c["hidden"] % c["heads"]:
        raise ValueError(f"{c['id']}: hidden {c['hidden']} not divisible by heads {c['heads']}")
    if c["heads"] % c["kv_heads"]:
        raise ValueError(f"{c['id']}: heads {c['heads']} not divisible by kv_heads {c['kv_heads']}")
    if c["world"] not in (1, 2):
        raise ValueError(f"{c['id']}: world must be 1 or 2")
    if c["mlp"] not in ("gelu", "swiglu") or c["norm"] not in ("layernorm", "rmsnorm"):
        raise ValueError(f"{c['id']}: bad mlp/norm")
    if c["grad_accum"] < 1 or c["micro_batch"] < 1:
        raise ValueError(f"{c['id']}: micro_batch and grad_accum must be >= 1")
    if c["activation_checkpointing"] not in ("none", "selective", "full"):
        raise ValueError(f"{c['id']}: activation_checkpointing must be none, selective or full")
    if c.get("compile") not in (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        raise ValueError(f"{c['id']}: compile must be null or a torch.compile mode")
    # fp32 parameters under bf16 or fp16 autocast (fp16 with torch.amp.GradScaler), or bf16 parameters without
    # autocast; the suite trains nothing else
    if (c["param_dtype"], c["compute_dtype"]) not in (("fp32", "bf16"), ("fp32", "fp16"), ("bf16", "bf16")):
        raise ValueError(f"{c['id']}: param_dtype/compute_dtype must be fp32/bf16, fp32/fp16 or bf16/bf16")
    if c.get("fp8", "none") not in ("none", "tensorwise", "rowwise"):
        raise ValueError(f"{c['id']}: fp8 must be none, tensorwise or rowwise")
    if c.get("fp8", "none") != "none" and (c["param_dtype"], c["compute_dtype"]) != ("fp32", "bf16"):
        raise ValueError(f"{c['id']}: fp8 linears are measured under bf16 autocast over fp32 parameters only")
    if c["optimizer_impl"] not in ("fused", "foreach"):
        raise ValueError(f"{c['id']}: optimizer_impl must be fused or foreach")
    if not c["grad_clip"] >= 0:
        raise ValueError(f"{c['id']}: grad_clip must be 0 (none) or a positive max norm")


def param_count(c: dict) -> int:
    """Exact parameter count of train_gpt.GPT for this configuration (checked against the model)."""
    h, L, V, T = c["hidden"], c["layers"], c["vocab"], c["seq_len"]
    hd = h // c["heads"]
    qkv = h * (c["heads"] + 2 * c["kv_heads"]) * hd
    proj = h * h
    mlp = (2 if c["mlp"] == "gelu" else 3) * h * c["ffn_hidden"]
    norm = 2 * h if c["norm"] == "layernorm" else h  # weight (+ bias for LayerNorm)
    per_layer = qkv + proj + mlp + 2 * norm
    head = 0 if c["tied_embeddings"] else V * h  # a tied head is the token embedding
    return V * h + T * h + L * per_layer + norm + head  # tok, pos, blocks, final norm, head


def model_flops_per_step(c: dict) -> float:
    """Training FLOPs of one optimizer step, all GPUs together: 6·N_matmul·tokens plus attention
    (4·T·h per token per layer forward for QK^T and PV, ×3 for training, halved for causal)."""
    h, L, V, T = c["hidden"], c["layers"], c["vocab"], c["seq_len"]
    hd = h // c["heads"]
    n_matmul = L * (h * (c["heads"] + 2 * c["kv_heads"]) * hd + h * h
                    + (2 if c["mlp"] == "gelu" else 3) * h * c["ffn_hidden"]) + V * h
    tokens = c["micro_batch"] * c["grad_accum"] * T * c["world"]
    attn = 3 * 4 * L * T * h * tokens / 2
    return 6.0 * n_matmul * tokens + attn


def estimate_memory_gib(c: dict) -> float:
    """Rough upper estimate of peak GPU memory, to skip a configuration that cannot fit (not a model)."""
    n = param_count(c)
    states = (16 if c["param_dtype"] == "fp32" else 8) * n  # param, grad, Adam m and v
    buckets = 4 * n if (c["world"] > 1 and not c["gradient_as_bucket_view"]) else 0
    tokens = c["micro_batch"] * c["seq_len"]
    act = tokens * c["layers"] * (40 * c["hidden"] + 6 * c["ffn_hidden"])  # bytes, generous
    logits = tokens * c["vocab"] * 12
    return (states + buckets + act + logits) / 2**30


def scenario(c: dict) -> dict:
    """The stepsim scenario (SCENARIO.md, version 1) equivalent to this configuration."""
    return {
        "stepsim": 1,
        "name": c["id"],
        "cluster": {"node": "hgx-h200", "nodes": 1, "gpus_per_node": c["world"], "profile": "builtin"},
        "model": {
            "type": "transformer",
            "layers": c["layers"],
            "hidden": c["hidden"],
            "heads": c["heads"],
            "kv_heads": c["kv_heads"],
            "ffn_hidden": c["ffn_hidden"],
            "vocab": c["vocab"],
            "seq_len": c["seq_len"],
            "mlp": c["mlp"],
            "norm": c["norm"],
            "tied_embeddings": c["tied_embeddings"],
        },
        "training": {
            "micro_batch": c["micro_batch"],
            "grad_accum": c["grad_accum"],
            "param_dtype": c["param_dtype"],
            "compute_dtype": c["compute_dtype"],
            "optimizer": c["optimizer"],
            "optimizer_impl": c["optimizer_impl"],
            "grad_clip_norm": c["grad_clip"],
            "activation_checkpointing": c["activation_checkpointing"],
        },
        "parallel": {"data": "ddp", "tp": 1, "pp": 1},
        "ddp": {
            "bucket_cap_mb": c["bucket_cap_mb"],
            "first_bucket_mb": c["first_bucket_mb"],
            "gradient_as_bucket_view": c["gradient_as_bucket_view"],
            "find_unused_parameters": False,
            "static_graph": False,
            "comm_hook": "none",
        },
        **({"compile": {"enabled": True, "fullgraph": True, "dynamic": False, "mode": c["compile"]}}
           if c.get("compile") else {}),
        "jitter": {"enabled": True},
        "sim": {"steps": 4, "seed": 1},
        **({"fp8": {"enabled": True, "recipe": c["fp8"]}} if c.get("fp8", "none") != "none" else {}),
    }


for _c in all_configs():
    check(_c)
assert len({c["id"] for c in all_configs()}) == len(all_configs()), "duplicate configuration id"
