"""Checks of step_spread.py's statistics on hand-made records (no torch needed):
python3 -m unittest calibration/pytorch/test_step_spread.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import step_spread as ss  # noqa: E402


def rank(r, ends, ready, backward):
    return {"rank": r, "step_end_us": ends, "bucket_ready_us": ready, "backward_end_us": backward}


class StepSpread(unittest.TestCase):
    def test_nearest_rank_matches_stepsim(self):
        v = list(range(100, 0, -1))
        self.assertEqual(ss.nearest_rank(v, 99), 99)
        self.assertEqual(ss.nearest_rank(v, 50), 50)
        self.assertEqual(ss.nearest_rank([7, 3, 10, 1, 5, 9, 2, 8, 4, 6], 99), 10)

    def test_step_time_is_the_slowest_ranks_and_delta_sync_the_arrival_spread(self):
        # Two ranks, two measured steps: rank 1's second step 12 ms, the rest 10 ms.
        r0 = rank(0, [0, 10000, 20000], [[0, 0], [5000, 8000], [15000, 18000]], [0, 9000, 19000])
        r1 = rank(1, [0, 10000, 22000], [[0, 0], [5100, 8000], [15000, 18400]], [0, 9500, 19000])
        s = ss.summarize({"id": "x", "world": 2, "per_rank": [r0, r1], "bucket_bytes": [100, 200]})
        self.assertEqual(s["steps"], 2)
        self.assertEqual(s["step_time_ms"]["p50"], 10.0)
        self.assertEqual(s["step_time_ms"]["p99"], 12.0)
        self.assertAlmostEqual(s["step_time_ms"]["std"], 2 ** 0.5)
        # bucket 0: spreads 0, 100, 0 µs over the three recorded steps; bucket 1: 0, 0, 400
        self.assertEqual(s["buckets"][0]["delta_sync_us"]["p99"], 100)
        self.assertEqual(s["buckets"][1]["delta_sync_us"]["p50"], 0)
        self.assertEqual(s["buckets"][1]["delta_sync_us"]["p99"], 400)
        self.assertEqual(s["backward_end_skew_ms"]["p99"], 0.5)

    def test_one_rank_has_no_buckets(self):
        s = ss.summarize({"id": "x", "world": 1, "per_rank": [{"rank": 0, "step_end_us": [0, 5, 11]}]})
        self.assertNotIn("buckets", s)
        self.assertEqual(s["step_time_ms"]["n"], 2)


if __name__ == "__main__":
    unittest.main()
