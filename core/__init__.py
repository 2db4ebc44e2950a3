"""Smart Motion core: pure numpy motion model, analysis and synthesis; the engine of the CLI and the add-on.

Nothing in this package imports Blender (``bpy``/``mathutils``); the add-on in
``addon/`` converts Blender data to and from :class:`core.motion.Motion`.
Conventions (quaternions ``(w, x, y, z)``, lengths in the source's unit, axes
converted only at the edges, frame ranges end-inclusive) are in
``docs/design.md``. Data flows one way: clips -> analysis -> plan -> frames ->
contacts. The modules, in that order (the papers' sections in brackets):

The motion and its files
    :mod:`.motion`        the one motion type, its skeleton, forward kinematics
    :mod:`.quat`          flat quaternion functions over ``(..., 4)``
    :mod:`.bvh`           read and write BVH (axis and unit conversion happen here)
    :mod:`.rig`           joint roles (pelvis, legs, arms, spine) across naming schemes
    :mod:`.files`         writing outputs whole or not at all, never over an input
    :mod:`.budget`        the memory budget every tool keeps to
    :mod:`.options`       the engine's tuning constants, one keyword-only dataclass per stage
    :mod:`.demo`          demo content authored in code: clips, hops, reach examples
    :mod:`.text`          how messages word counts ("1 strip", "2 strips")
    :mod:`.progress`      progress of long work: a callback hearing fractions rising to 1

Sequential synthesis (Oshita 2008, Oshita 2014)
    :mod:`.analysis`      contacts, support phases, base foot, body orientation (2008 §4)
    :mod:`.align`         placing the next clip on the previous one (2008 §4.2-4.3)
    :mod:`.plan`          the plan as data: every decision, ``to_dict`` / ``from_dict``
    :mod:`.methods`       planning one pair: method, blending segments, ranges (2014 §4.1-4.2)
    :mod:`.optimize`      Q_t, Q_p, Q_v and the range search (2014 §4.3)
    :mod:`.weights`       Hermite weight functions (2014 §4.4)
    :mod:`.track`         what planning and rendering share: the motion so far
    :mod:`.render`        frames from a plan: time warps, blending, leg adaptation
    :mod:`.contacts`      the contact stage: planted feet over every gap
    :mod:`.ik`            two-bone leg IK, pelvis placement (2008 §7.2)
    :mod:`.quality`       the one measure of a gap's quality
    :mod:`.footprints`    footprints: where each foot is held down, and whether it slides
    :mod:`.figures`       the 2014 paper's Fig. 5 speeds, clips placed as the plan placed them
    :mod:`.schedule`      as soon as possible, t_current (2014 §5, eq. 17)
    :mod:`.room`          Give Room: the least move of a flagged gap's later clips that unflags it
    :mod:`.compose`       additional upper-body motions and their vibration (2008 §8)
    :mod:`.timeline`      spans, default cores, the sequence/composition rule, overlap groups, Pack's tracks
    :mod:`.synthesize`    clips on a timeline -> plan -> motion: the entry point
    :mod:`.resynthesis`   live re-synthesis: redoing only what a change touches

Motions played at the same time (Ménardais et al. 2004)
    :mod:`.sync`          support-phase sequences, synchronization, time warps
    :mod:`.mkm`           blending the synchronized motions (MKM)

One-hop transitions (Koyama & Goto 2019)
    :mod:`.hops`          search, default weight, the precomputed table, runners
    :mod:`.hops_render`   rendering one entry of a hop table
    :mod:`.cluster`       the precompute on Dask (the only module that imports Dask)

Partial blending and assembly (Juang et al. 2009)
    :mod:`.reach`         reaching a target by blending examples (§3, §5.2)
    :mod:`.assemble`      partial-figure retrieval and assembly (§4)

The command line
    :mod:`.__main__`      ``python -m core``: analyze, synthesize, blend, demo, hops, reach,
                          assemble (``docs/cli.md``)
"""
