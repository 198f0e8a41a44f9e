"""Every reader at the edge: item files, workloads, saved and live stats."""
