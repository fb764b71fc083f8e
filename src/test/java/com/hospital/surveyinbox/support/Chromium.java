package com.hospital.surveyinbox.support;

import java.nio.file.Path;
import java.util.Map;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium for the console's browser tests: a Chromium or Chrome and its chromedriver on PATH;
 * else Debian's {@code chromium} and {@code chromium-driver} where they can be installed (root on Debian);
 * else Selenium Manager, which finds or downloads a matching browser and driver itself.
 */
public final class Chromium {

    private static final java.util.List<String> BROWSERS =
            java.util.List.of("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome");

    private Chromium() {
    }

    /** A new headless browser at 1280×800 that records the page's console messages. */
    public static ChromeDriver start() throws Exception {
        ChromeOptions options = new ChromeOptions();
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,800", "--lang=en-US");
        options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL"));
        java.util.Optional<Path> browser = Tools.find(BROWSERS.toArray(String[]::new));
        java.util.Optional<Path> driver = Tools.find("chromedriver");
        if ((browser.isEmpty() || driver.isEmpty()) && Tools.canApt()) {
            browser = java.util.Optional.of(Tools.require("the console's browser tests", BROWSERS,
                    java.util.List.of("chromium", "chromium-driver")));
            driver = Tools.find("chromedriver");
        }
        if (browser.isPresent() && driver.isPresent()) {
            options.setBinary(browser.get().toFile());
            ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(driver.get().toFile())
                    .usingAnyFreePort().build();
            return new ChromeDriver(service, options);
        }
        System.out.println("[browser] no chromium and chromedriver on PATH: Selenium Manager provides them");
        return new ChromeDriver(options);
    }
}
