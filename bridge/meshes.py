"""Blender meshes and viewport materials from the core's arrays (the reconstruction's, the simulation's).

Vertex and face arrays are written with ``foreach_set``; a material is one
viewport colour and opacity (the reconstruction is drawn translucent over the
video).
"""

from __future__ import annotations

import bpy
import numpy as np


def mesh_from_arrays(name: str, vertices: np.ndarray, faces: np.ndarray) -> bpy.types.Mesh:
    """A new mesh from vertex and face arrays, written with ``foreach_set``.

    Args:
        name: The mesh's name.
        vertices: ``(V, 3)`` coordinates in metres, the object's local frame.
        faces: ``(F, K)`` vertex indices, K corners per face (3 or 4).
    """
    vertices = np.asarray(vertices, np.float32).reshape(-1, 3)
    faces = np.asarray(faces, np.int32)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", vertices.ravel())
    mesh.loops.add(faces.size)
    mesh.polygons.add(len(faces))
    mesh.polygons.foreach_set("loop_start", np.arange(0, faces.size, faces.shape[1], dtype=np.int32))
    mesh.polygons.foreach_set("vertices", faces.ravel())
    mesh.update()
    mesh.validate()
    return mesh


def mesh_from_trimesh(name: str, mesh) -> bpy.types.Mesh:
    """A new Blender mesh from a ``trimesh.Trimesh`` (metres, the object's local frame)."""
    return mesh_from_arrays(name, mesh.vertices, mesh.faces)


def wire_mesh(name: str, vertices: np.ndarray, edges: np.ndarray) -> bpy.types.Mesh:
    """A new mesh of edges only (a drawing: drawn as lines, never rendered as a surface).

    Args:
        name: The mesh's name.
        vertices: ``(V, 3)`` coordinates in metres, the object's local frame.
        edges: ``(E, 2)`` vertex indices.
    """
    vertices = np.asarray(vertices, np.float32).reshape(-1, 3)
    edges = np.asarray(edges, np.int32).reshape(-1, 2)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(len(vertices))
    mesh.vertices.foreach_set("co", vertices.ravel())
    mesh.edges.add(len(edges))
    mesh.edges.foreach_set("vertices", edges.ravel())
    mesh.update()
    mesh.validate()
    return mesh


def material(name: str, colour: tuple[float, float, float], alpha: float) -> bpy.types.Material:
    """The viewport material ``name`` (made if missing) with a linear RGB colour and an opacity."""
    block = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    block.diffuse_color = (*colour, alpha)
    block.use_backface_culling = True  # one layer of colour per surface, not two
    return block
