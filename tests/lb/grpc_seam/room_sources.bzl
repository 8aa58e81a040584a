"""The sources of policy/lb's rooms, gathered from the build graph.

room_sources(deps = ["//policy/lb"]) gives every .cc and .h in the srcs and
hdrs of the targets that //policy/lb depends on, in packages under
policy/lb but not the seam's own (policy/lb/grpc_seam). A file or room
linked into the library is checked by //tests/lb/grpc_seam:seam_wall_test
without being listed anywhere, and no room's BUILD file needs a filegroup.
"""

_SEAM = "policy/lb/grpc_seam"

_RoomSourcesInfo = provider(fields = ["files"])

def _in_a_room(label):
    package = label.package
    in_lb = package == "policy/lb" or package.startswith("policy/lb/")
    return label.workspace_name == "" and in_lb and package != _SEAM

def _room_sources_aspect_impl(target, ctx):
    direct = []
    if _in_a_room(target.label):
        for attr in ["srcs", "hdrs", "textual_hdrs"]:
            for dep in getattr(ctx.rule.attr, attr, []):
                direct += [
                    f
                    for f in dep.files.to_list()
                    if f.is_source and f.extension in ["cc", "h"]
                ]
    transitive = [
        dep[_RoomSourcesInfo].files
        for dep in getattr(ctx.rule.attr, "deps", [])
        if _RoomSourcesInfo in dep
    ]
    return [_RoomSourcesInfo(files = depset(direct, transitive = transitive))]

_room_sources_aspect = aspect(
    implementation = _room_sources_aspect_impl,
    attr_aspects = ["deps"],
)

def _room_sources_impl(ctx):
    files = depset(transitive = [
        dep[_RoomSourcesInfo].files
        for dep in ctx.attr.deps
    ])
    return [DefaultInfo(
        files = files,
        runfiles = ctx.runfiles(transitive_files = files),
    )]

room_sources = rule(
    implementation = _room_sources_impl,
    attrs = {
        "deps": attr.label_list(aspects = [_room_sources_aspect]),
    },
)
