"""What the calibration scripts that run under torchrun share: joining the process group on this process's GPU, the
largest of every rank's value (so that all ranks spin or loop alike), and every rank's records written by rank 0 at
the end."""
import json
import os

import torch
import torch.distributed as dist


def join_ranks():
    """Joins the NCCL process group torchrun set up and binds this process to its GPU (LOCAL_RANK: one process per
    GPU of this host); returns (rank, device)."""
    dist.init_process_group("nccl")
    local = int(os.environ.get("LOCAL_RANK", dist.get_rank()))
    torch.cuda.set_device(local)
    return dist.get_rank(), torch.device("cuda", local)


def agree_max(x):
    """The largest over the ranks of each rank's number x (on this process's GPU, as join_ranks set it)."""
    t = torch.tensor([float(x)], device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


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
