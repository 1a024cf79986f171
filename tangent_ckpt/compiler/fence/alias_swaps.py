"""Buffer swaps, for the aliasing fence (``aliasing.py``): ``grid, scratch =
scratch, grid`` in a loop leaves two distinct arrays, each under the other's
name.  Joining the states of successive iterations would let both names be
both arrays; renaming the objects instead keeps them apart."""

from tangent_ckpt.compiler.fence.alias_values import site_node


class SwapRenaming:
    """Mixed into the fence (which provides ``set``, ``followed`` and the site
    sets): ``relabelled`` is called once per pass over a loop body."""

    def relabelled(self, after, head, body_sites):
        """``after`` (the names after one run of a loop body that started from
        ``head``) with the objects it only exchanged between names renamed as at
        the head: ``grid, scratch = scratch, grid`` leaves two distinct arrays,
        each now under the other's name, and naming them so keeps them apart at
        the head instead of joining both into both names.  Only objects made
        before the loop, which the body never makes again, are renamed, each name
        holding exactly one of them before and after, and only as a permutation
        (every object renamed is renamed to another of them); the renaming is
        applied to every name at once, so every "may share" answer is kept."""
        renamed = {}
        for name, before in head.items():
            now = after.get(name)
            if now is None or now.is_ == before.is_ or len(before.is_) != 1 or \
                    len(now.is_) != 1:
                continue
            (old,), (new,) = before.is_, now.is_
            if not (self.made_before(old, body_sites) and self.made_before(new, body_sites)):
                continue
            if renamed.setdefault(new, old) != old:
                return after  # one object under two earlier names: no renaming
        if not renamed or set(renamed) != set(renamed.values()) or \
                any((a[1] in self.followed) != (b[1] in self.followed)
                    for a, b in renamed.items()):
            return after
        if any(self.site_kind(a) != self.site_kind(b) for a, b in renamed.items()):
            # a name of one kind of object (an array np.zeros made) may now name one
            # of another kind (a product): what either site is known to make is
            # forgotten, for the whole function
            self.blurred |= {o[1] for o in renamed}
        out = {}
        for name, info in after.items():  # (set: the lookups of holders see new names)
            self.set(out, name, info.mapped(lambda o: renamed.get(o, o)))
        return out

    def made_before(self, origin, body_sites):
        return origin[0] == "site" and site_node(origin[1]) not in body_sites

    def site_kind(self, origin):
        """What the fence knows of the object a site makes, besides its identity."""
        key = origin[1]
        return (key in self.container_sites, key in self.builtin_sites,
                key in self.index_sites, key in self.list_sites)
