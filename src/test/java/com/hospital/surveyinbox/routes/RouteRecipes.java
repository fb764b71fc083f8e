package com.hospital.surveyinbox.routes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Applies the recipes of {@code routes/recipes/*.recipe.yaml} to a copy of the route files, as YAML: each
 * recipe names a route file and a list of edits by step id —
 * {@code move: <id>, before: <id>}, {@code insert-before: <id>} / {@code insert-after: <id>} with {@code steps},
 * {@code replace: <id>} with {@code steps}. A step is found by its {@code id} anywhere in the file (ids are
 * unique); an id a recipe names that the file does not have fails the edit, so a recipe can never silently
 * stop matching the routes it describes.
 */
final class RouteRecipes {

    private RouteRecipes() {
    }

    /** Copies every {@code *.camel.yaml} of {@code routes} to {@code target}, with every recipe applied in file-name order. */
    static void applyAll(Path routes, Path recipes, Path target) {
        try {
            Files.createDirectories(target);
            try (Stream<Path> old = Files.list(target)) {
                for (Path p : old.toList()) {
                    Files.delete(p);
                }
            }
            try (Stream<Path> files = Files.list(routes)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                    Files.copy(f, target.resolve(f.getFileName()));
                }
            }
            try (Stream<Path> files = Files.list(recipes)) {
                for (Path recipe : files.filter(p -> p.toString().endsWith(".recipe.yaml")).sorted().toList()) {
                    apply(recipe, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static void apply(Path recipe, Path target) throws IOException {
        Map<String, Object> spec = (Map<String, Object>) yaml().load(Files.readString(recipe, StandardCharsets.UTF_8));
        Path file = target.resolve((String) spec.get("file"));
        Object routes = yaml().load(Files.readString(file, StandardCharsets.UTF_8));
        for (Map<String, Object> edit : (List<Map<String, Object>>) spec.get("edits")) {
            edit(routes, edit, recipe.getFileName().toString());
        }
        Files.writeString(file, yaml().dump(routes), StandardCharsets.UTF_8);
    }

    @SuppressWarnings("unchecked")
    private static void edit(Object routes, Map<String, Object> edit, String recipe) {
        List<Object> steps = (List<Object>) edit.get("steps");
        if (edit.containsKey("move")) {
            Object moved = remove(routes, (String) edit.get("move"), recipe);
            Place before = find(routes, (String) edit.get("before"), recipe);
            before.list().add(before.index(), moved);
        } else if (edit.containsKey("insert-before")) {
            Place at = find(routes, (String) edit.get("insert-before"), recipe);
            at.list().addAll(at.index(), steps);
        } else if (edit.containsKey("insert-after")) {
            Place at = find(routes, (String) edit.get("insert-after"), recipe);
            at.list().addAll(at.index() + 1, steps);
        } else if (edit.containsKey("replace")) {
            Place at = find(routes, (String) edit.get("replace"), recipe);
            at.list().remove(at.index());
            at.list().addAll(at.index(), steps);
        } else {
            throw new IllegalArgumentException(recipe + ": unknown edit " + edit.keySet());
        }
    }

    private record Place(List<Object> list, int index) {
    }

    private static Object remove(Object routes, String id, String recipe) {
        Place at = find(routes, id, recipe);
        return at.list().remove(at.index());
    }

    /** The list holding the step whose {@code id} is {@code id}, and its index there. */
    private static Place find(Object routes, String id, String recipe) {
        List<Place> found = new ArrayList<>();
        walk(routes, id, found);
        if (found.size() != 1) {
            throw new IllegalStateException(recipe + ": step id '" + id + "' found " + found.size() + " times");
        }
        return found.get(0);
    }

    @SuppressWarnings("unchecked")
    private static void walk(Object node, String id, List<Place> found) {
        if (node instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                if (list.get(i) instanceof Map<?, ?> step && step.size() == 1
                        && step.values().iterator().next() instanceof Map<?, ?> body && id.equals(body.get("id"))) {
                    found.add(new Place((List<Object>) list, i));
                }
                walk(list.get(i), id, found);
            }
        } else if (node instanceof Map<?, ?> map) {
            for (Object value : map.values()) {
                walk(value, id, found);
            }
        }
    }

    private static Yaml yaml() {
        DumperOptions dump = new DumperOptions();
        dump.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        dump.setWidth(200);
        return new Yaml(new LoaderOptions(), dump);
    }
}
