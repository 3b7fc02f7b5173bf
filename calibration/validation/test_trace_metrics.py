"""Checks of the interval arithmetic and step splitting (no torch needed):
python3 -m unittest calibration/validation/test_trace_metrics.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402
import trace_holes  # noqa: E402
import trace_metrics as tm  # noqa: E402


def kern(name, ts, dur, cat="kernel", tid=7):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": tid}


def step(ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": tm.STEP_LABEL, "ts": ts, "dur": dur}


class IntervalTest(unittest.TestCase):
    def test_merge_joins_overlapping_and_touching(self):
        self.assertEqual(tm.merge([[5, 7], [0, 2], [1, 3], [3, 4]]), [[0, 4], [5, 7]])

    def test_intersect(self):
        a = tm.merge([[0, 10], [20, 30]])
        b = tm.merge([[5, 25]])
        self.assertEqual(tm.intersect(a, b), [[5, 10], [20, 25]])


class StepMetricsTest(unittest.TestCase):
    # One step (CPU range 0..1000 µs): compute 100..300 and 250..400 (union 300 µs),
    # NCCL 350..500 (150 µs, of which 50 overlap compute), a memcpy 600..620.
    # A second step's kernel at 1500 belongs to step 2; one kernel at 5000 is outside any step.
    trace = {"traceEvents": [
        step(0, 1000), step(1200, 1000),
        kern("ampere_bf16_s16816gemm_bf16_128x128", 100, 200),
        kern("flash_fwd_kernel", 250, 150),
        kern("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 350, 150, tid=20),
        kern("Memcpy DtoD (Device -> Device)", 600, 20, cat="gpu_memcpy"),
        kern("vectorized_elementwise_kernel", 1500, 10),
        kern("late", 5000, 10),
        {"ph": "X", "cat": "gpu_user_annotation", "name": tm.STEP_LABEL, "ts": 90, "dur": 900},
    ]}

    def test_split(self):
        steps, unassigned = tm.split_steps(self.trace)
        self.assertEqual([len(s) for s in steps], [4, 1])
        self.assertEqual(unassigned, 1)

    def test_metrics_of_first_step(self):
        steps, _ = tm.split_steps(self.trace)
        m = tm.step_metrics(steps[0])
        self.assertAlmostEqual(m["compute_ms"], 0.320)  # 100..400 plus the 20 µs copy
        self.assertAlmostEqual(m["comm_ms"], 0.150)
        self.assertAlmostEqual(m["overlap_ms"], 0.050)
        self.assertAlmostEqual(m["exposed_comm_ms"], 0.100)
        self.assertAlmostEqual(m["overlap_ratio"], 50 / 320)
        self.assertAlmostEqual(m["span_ms"], 0.520)
        self.assertAlmostEqual(m["idle_in_span_ms"], 0.520 - 0.420)
        self.assertEqual(m["kernels"], 4)
        self.assertEqual(m["category_count"],
                         {"attention": 1, "gemm": 1, "memcpy": 1, "nccl": 1})

    def test_split_by_gaps(self):
        # gaps: 400..600 (200 µs), 620..1500 (880 µs), 1510..5000: threshold 500 µs gives 3 groups
        groups, unassigned = tm.split_by_gaps(self.trace, 500.0)
        self.assertEqual([len(g) for g in groups], [4, 1, 1])
        self.assertEqual(unassigned, 0)

    def test_primary_is_last_step(self):
        r = tm.analyze_trace(self.trace)
        self.assertEqual(r["profiled_steps"], 2)
        self.assertEqual(r["primary"]["kernels"], 1)


class CategoryTest(unittest.TestCase):
    def test_names(self):
        c = tm.category
        self.assertEqual(c("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT", "kernel"), "gemm")
        self.assertEqual(c("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "kernel"), "gemm")
        self.assertEqual(c("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", "kernel"),
                         "attention")
        self.assertEqual(c("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>", "kernel"),
                         "optimizer")
        self.assertEqual(c("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage)", "kernel"),
                         "nccl")
        self.assertEqual(c("void at::native::vectorized_layer_norm_kernel", "kernel"), "elementwise_other")


class ConfigTest(unittest.TestCase):
    def test_enough_configurations(self):
        cs = configs.all_configs(include_smoke=False)
        self.assertGreaterEqual(len(cs), 22)
        self.assertGreaterEqual(sum(c["world"] == 1 for c in cs), 4)

    def test_param_count_gpt2_small(self):
        # GPT-2 small with untied head, vocab 50304, 1024 positions, LayerNorm with bias:
        # 2·50304·768 + 1024·768 + 12·(12·768² + 4·768) + 2·768
        c = configs.by_id("s1-l12-h768-s1024-mb8")
        want = 2 * 50304 * 768 + 1024 * 768 + 12 * (12 * 768 * 768 + 4 * 768) + 2 * 768
        self.assertEqual(configs.param_count(c), want)

    def test_scenario_mirrors_config(self):
        c = configs.by_id("d2-l24-h2560-s1024-mb2-b100-view-swiglu-gqa4")
        s = configs.scenario(c)
        self.assertEqual(s["cluster"]["gpus_per_node"], 2)
        self.assertEqual(s["model"]["kv_heads"], 4)
        self.assertEqual(s["model"]["ffn_hidden"], 6912)
        self.assertEqual(s["ddp"]["bucket_cap_mb"], 100.0)
        self.assertTrue(s["ddp"]["gradient_as_bucket_view"])


class HolesByStateTest(unittest.TestCase):
    """Rank 0's NCCL kernel is resident over [5, 50); its peer's starts at 20: waiting [5, 20), moving [20, 50)."""

    def test_each_hole_goes_under_the_state_it_lies_in(self):
        nccl = lambda ts, dur: kern("ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts, dur, tid=2)
        own = tm.device_events({"traceEvents": [
            kern("elementwise_a", 0, 10), nccl(5, 45),
            kern("layer_norm_grad_input_kernel", 12, 16),            # hole 2 in [10, 12): waiting
            kern("Memset (Device)", 30, 1, cat="gpu_memset"),        # hole 2, and 2 more before the GEMM:
            kern("nvjet_sm90_tst_128x256", 33, 7),                   # one operation, 4 in [28, 33): moving
            kern("Memcpy DtoD (Device -> Device)", 43, 2, cat="gpu_memcpy"),  # 3 in [40, 43): moving
            kern("elementwise_d", 60, 10),                           # 15 across the NCCL kernel's end: left out
            kern("vectorized_elementwise_kernel<4, AUnaryFunctor<float>>", 72, 8),  # 2 in [70, 72): alone, a copy
            kern("Memset (Device)", 81, 1, cat="gpu_memset"),        # 1, a memset of its own: memory-bound
            kern("cudnn_generated_fort_native_sdpa_sm90_flash_bprop", 84, 6),  # 2: attention
        ]})
        peer = tm.device_events({"traceEvents": [nccl(20, 30)]})
        holes = trace_holes.holes_by_state(own, peer)
        self.assertEqual(holes, {("memory", "waiting"): [2.0], ("gemm+memset", "moving"): [4.0],
                                 ("copy", "moving"): [3.0], ("copy", "alone"): [2.0], ("memory", "alone"): [1.0],
                                 ("attention", "alone"): [2.0]})


if __name__ == "__main__":
    unittest.main()
