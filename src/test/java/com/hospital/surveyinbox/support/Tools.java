package com.hospital.surveyinbox.support;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The outside tools some tests and the benchmark run (promtool, nginx, Chromium, wrk): looked up on PATH first
 * (then the sbin folders, where Debian puts nginx); when missing, installed from Debian's packages only where
 * that is possible — root on Debian with apt-get — and otherwise a failure that says what to install.
 */
public final class Tools {

    private Tools() {
    }

    /** The first of {@code names} found as an executable on PATH, /usr/sbin, /sbin or /usr/local/bin. */
    public static Optional<Path> find(String... names) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/local/bin"));
        for (String name : names) {
            for (String dir : dirs) {
                if (!dir.isBlank() && Files.isExecutable(Path.of(dir, name))) {
                    return Optional.of(Path.of(dir, name));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * {@code setsid} (util-linux), which starts a command in a session of its own, where there is one (Linux);
     * empty elsewhere (macOS has none): the command then shares the caller's process group.
     */
    public static Optional<Path> setsid() {
        return find("setsid");
    }

    /**
     * One of {@code names}, installing {@code debianPackages} first when none is found and that is possible.
     *
     * @param purpose what needs it, for the messages ("the alert rules' unit tests")
     */
    public static Path require(String purpose, List<String> names, List<String> debianPackages) {
        Optional<Path> found = find(names.toArray(String[]::new));
        if (found.isPresent()) {
            return found.get();
        }
        String packages = String.join(" ", debianPackages);
        if (!canApt()) {
            throw new IllegalStateException(purpose + " needs " + String.join(" or ", names) + " on PATH. Install it "
                    + "(Debian/Ubuntu: apt-get install " + packages + "; elsewhere your system's package of it).");
        }
        System.out.println("[tools] " + purpose + ": installing " + packages + " (apt-get install " + packages + ")");
        Path log = Path.of("target", "install-" + debianPackages.get(0) + ".log");
        try {
            Files.createDirectories(log.getParent());
            Process install = new ProcessBuilder("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive "
                    + "apt-get install -y -qq --no-install-recommends " + packages)
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            install.waitFor();
        } catch (IOException e) {
            throw new IllegalStateException("could not run apt-get for " + packages, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return find(names.toArray(String[]::new)).orElseThrow(() -> new IllegalStateException(purpose + " needs "
                + String.join(" or ", names) + "; apt-get install " + packages + " failed (see " + log + ")."));
    }

    /** Root on Debian (or a derivative) with apt-get: installing a package is ours to do. */
    static boolean canApt() {
        if (!Files.exists(Path.of("/etc/debian_version")) || find("apt-get").isEmpty()) {
            return false;
        }
        try {
            Process id = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
            String uid = new String(id.getInputStream().readAllBytes()).strip();
            return id.waitFor() == 0 && uid.equals("0");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
