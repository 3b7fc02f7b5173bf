"""Every rank's records, written by rank 0: the end of the calibration scripts that run under torchrun
(sustained_speed.py, interference_training.py, power_duty.py)."""
import json

import torch.distributed as dist


def write_gathered(path, recs, meta=None):
    """Gathers each rank's list of JSON-able records; rank 0 writes `meta` (if given) and then every record, rank by
    rank, as JSON Lines to `path`."""
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, recs)
    if dist.get_rank() == 0:
        with open(path, "w") as f:
            if meta is not None:
                f.write(json.dumps(meta) + "\n")
            for rs in gathered:
                for rec in rs:
                    f.write(json.dumps(rec) + "\n")
