package com.hospital.surveyinbox.support;

import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * The main class of every JVM the tests start (a pod, a second instance, the benchmarked service, the broker): it
 * runs the main class named first with the remaining arguments, and ends the JVM (System.exit: its shutdown hooks
 * run) once the JVM that started it is gone. A test JVM killed hard (a CI timeout's SIGKILL, an IDE's stop) left
 * these running: pods retrying a database that was gone, a broker holding its port, for the next run to meet.
 */
public final class EndsWithParent {

    /**
     * The starting JVM's pid (a system property of the started one): its parent may be another process (setsid forks
     * when it has to), which ends at once.
     */
    static final String STARTER_PID = "ends-with.pid";

    private EndsWithParent() {
    }

    /** The options that make a JVM started with {@link EndsWithParent} end with this one. */
    public static java.util.List<String> withThisJvm(String mainClass) {
        return java.util.List.of("-D" + STARTER_PID + "=" + ProcessHandle.current().pid(), EndsWithParent.class.getName(), mainClass);
    }

    private static void gone(long pid) {
        System.err.println("[EndsWithParent] the JVM that started this one (pid " + pid + ") is gone: stopping");
        System.exit(143);
    }

    public static void main(String[] args) throws Throwable {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: EndsWithParent <main class> [arguments]");
        }
        String starter = System.getProperty(STARTER_PID);
        (starter != null ? ProcessHandle.of(Long.parseLong(starter)) : ProcessHandle.current().parent())
                .ifPresentOrElse(parent -> parent.onExit().thenRun(() -> gone(parent.pid())), () -> gone(Long.parseLong(starter)));
        try {
            Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
