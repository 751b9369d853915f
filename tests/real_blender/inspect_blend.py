"""Run inside a real Blender on an opened .blend: prints what the file holds as one JSON line (R2G-JSON ...)."""

import json

import bpy

info = {"version": bpy.app.version_string, "file_version": list(bpy.data.version), "objects": {}, "scene": {}}
for o in bpy.data.objects:
    ad = o.animation_data
    action = ad.action if ad else None
    keys = 0
    if action is not None:
        fcurves = getattr(action, "fcurves", None)
        if fcurves is not None:
            keys = max((len(fc.keyframe_points) for fc in fcurves), default=0)
    info["objects"][o.name] = {
        "type": o.type,
        "parent": o.parent.name if o.parent else None,
        "action": action.name if action else None,
        "keys": keys,
        "props": sorted(o.keys()),
        "source": (o.get("real2gym") or {}).get("source_name"),
    }
sc = bpy.context.scene
info["scene"] = {
    "props": sorted(sc.keys()),
    "frame_end": sc.frame_end,
    "camera": sc.camera.name if sc.camera else None,
    "markers": sorted(m.name for m in sc.timeline_markers),
    "out_dir": (sc.get("real2gym") or {}).get("out_dir"),
}
print("R2G-JSON " + json.dumps(info))
