"""The family folders: one package per family of tasks, ``cogen/families/<name>/``.

Each folder's ``__init__.py`` holds the family's record as ``FAMILY`` (a :class:`cogen.family.Family`),
and the folder holds every module that knows that family. The registry, :data:`cogen.family.FAMILIES`,
finds the folders here; nothing below this package imports from it.
"""
