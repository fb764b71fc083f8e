// The child JVM of OrphanWatchTest, run by the java launcher from this source file (single-file source mode):
// a compiled class with a main method in the test classes would make `mvn spring-boot:test-run` find two main
// classes and refuse to start the local run. The embedded services, PostgreSQL and Redis restarted once, then it
// waits to be killed.
public class RestartThenWait {
    public static void main(String[] args) throws Exception {
        com.hospital.surveyinbox.support.EmbeddedServices services = com.hospital.surveyinbox.support.EmbeddedServices.get();
        services.stopRedis();
        services.startRedis();
        services.stopPostgres();
        services.startPostgres();
        System.out.println("RESTARTED postgres=" + services.postgresPort() + " redis=" + services.redisPort() + " pids="
                + services.postgresProcessHandle().orElseThrow().pid() + "," + services.redisPid());
        System.out.flush();
        Thread.currentThread().join(); // until killed
    }
}
