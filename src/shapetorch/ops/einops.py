"""einops: rearrange, reduce, repeat, pack, unpack (filled in next)."""
