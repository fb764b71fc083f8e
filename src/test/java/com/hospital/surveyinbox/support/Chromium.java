package com.hospital.surveyinbox.support;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium driven by chromium-driver, both from Debian's packages. Installed on first use when
 * missing (the machine's user is root, as for the benchmark's wrk); a clear failure when that is impossible.
 */
public final class Chromium {

    static final Path BROWSER = Path.of("/usr/bin/chromium");
    static final Path DRIVER = Path.of("/usr/bin/chromedriver");

    private Chromium() {
    }

    /** A new headless browser at 1280×800 that records the page's console messages. */
    public static ChromeDriver start() throws Exception {
        provision();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BROWSER.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,800", "--lang=en-US");
        options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL"));
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort().build();
        return new ChromeDriver(service, options);
    }

    private static synchronized void provision() throws Exception {
        if (Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER)) {
            return;
        }
        System.out.println("[browser] installing chromium and chromium-driver (apt-get install chromium chromium-driver)");
        Process install = new ProcessBuilder("sh", "-c",
                "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver")
                .redirectErrorStream(true).redirectOutput(new File("target/chromium-install.log")).start();
        install.waitFor();
        if (!Files.isExecutable(BROWSER) || !Files.isExecutable(DRIVER)) {
            throw new IllegalStateException("The operator console's browser tests need Debian's chromium and "
                    + "chromium-driver (" + BROWSER + ", " + DRIVER + "); installing them failed (exit "
                    + install.exitValue() + ", see target/chromium-install.log). Install them: "
                    + "apt-get install chromium chromium-driver");
        }
    }
}
