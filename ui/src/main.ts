import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { initHost } from "./lib/ipc/host";

initHost();
const app = mount(App, { target: document.getElementById("app")! });

export default app;
